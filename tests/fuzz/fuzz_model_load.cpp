// Fuzzes the model loader on arbitrary bytes written to a file: the wire-format payload scan
// (LoadOptions::map_initializers), protobuf parsing, IR building, checker and shape inference
// must end in a model or a clean error, never a crash. Every payload the scan reports must lie
// inside the input, and a model that loads with mapped payloads must have the same
// initializer bytes as when every payload is copied. ai.onnx.ml nodes of a model that loads
// are created (ops::create_op), so their tree attributes (node and child ids, array lengths,
// modes, cycles; TreeEnsemble's leaf flags, roots and membership sets, past the loader's
// no-schema path; string attributes of CategoryMapper / LabelEncoder / OneHotEncoder / ZipMap /
// classlabels_strings: lengths, repeats, defaults) meet the validation on arbitrary values, and
// string initializers (string_data) must load the same both ways; seeds: scripts/ml/ml_parity.py
// --keep DIR (its v5, bad_v5_* and strings_* cases included).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "graph/loader.h"
#include "graph/payload_scan.h"
#include "ops/op.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (auto s = glassbox::graph::strip_initializer_payloads(data, size, 16))
    for (const auto& p : s->payloads)
      if (p.offset > size || p.size > size - p.offset || p.index < 0) __builtin_trap();
  static const std::string path = "/tmp/glassbox_fuzz_model_" + std::to_string(::getpid()) + ".onnx";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  glassbox::graph::LoadOptions mapped, copied;
  mapped.run_shape_inference = copied.run_shape_inference = false;  // keep runs fast; the scan is the target
  copied.map_initializers = false;
  auto a = glassbox::graph::load_model(path, mapped);
  auto b = glassbox::graph::load_model(path, copied);
  if (a.ok() != b.ok()) __builtin_trap();
  if (a.ok()) {
    for (const auto& [name, t] : a->graph.initializers) {
      auto it = b->graph.initializers.find(name);
      if (it == b->graph.initializers.end() || it->second.nbytes() != t.nbytes()) __builtin_trap();
      if (t.nbytes() && std::memcmp(t.raw(), it->second.raw(), t.nbytes()) != 0) __builtin_trap();
      if (t.dtype() == glassbox::DataType::kString)
        for (int64_t i = 0; i < t.numel(); ++i)
          if (!it->second.string_data() || t.string_data()[i] != it->second.string_data()[i]) __builtin_trap();
    }
    for (const auto& n : a->graph.nodes)
      if (n.domain == "ai.onnx.ml") (void)glassbox::ops::create_op(n, a->opset(""));
  }
  return 0;
}
