// Logits of one or more ONNX files from onnxruntime-node, batch 1 per text (bench/int8/fidelity.py).
// Usage: node ort_logits.js IDS.json OUT.json MODEL.onnx:LEVEL [MODEL.onnx:LEVEL ...]   (LEVEL: disabled | all)
// IDS.json: [{input_ids, attention_mask, token_type_ids}, ...]; OUT.json: {"MODEL:LEVEL": [[logits], ...]}.
const fs = require("fs");
const path = require("path");
const ort = require(path.join(__dirname, "..", "..", ".peers", "node_modules", "onnxruntime-node"));

async function main() {
  const [idsFile, outFile, ...specs] = process.argv.slice(2);
  const texts = JSON.parse(fs.readFileSync(idsFile, "utf8"));
  const out = {};
  for (const spec of specs) {
    const at = spec.lastIndexOf(":");
    const model = spec.slice(0, at), level = spec.slice(at + 1);
    const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, intraOpNumThreads: 2,
                                                              interOpNumThreads: 1});
    const rows = [];
    for (const t of texts) {
      const feeds = {};
      for (const name of session.inputNames) {
        const v = t[name];
        feeds[name] = new ort.Tensor("int64", BigInt64Array.from(v.map(BigInt)), [1, v.length]);
      }
      const r = await session.run(feeds);
      rows.push(Array.from(r[session.outputNames[0]].data));
    }
    out[spec] = rows;
  }
  fs.writeFileSync(outFile, JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
