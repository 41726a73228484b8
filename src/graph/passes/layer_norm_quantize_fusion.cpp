// Pass layer_norm_quantize_fusion: a glassbox::LayerNorm whose output a DynamicQuantizeLinear
// reads (onnxruntime's quantize_dynamic puts one before the Q/K/V products and one before the
// first FFN product of every encoder layer) becomes one glassbox::LayerNormDynamicQuantize node
// with the outputs of both: the float32 LayerNorm output (still read by the residual Add or the
// fused residual) and the DynamicQuantizeLinear outputs (uint8 values, scale, zero point) under
// their own names, so their consumers are untouched. The values are the two ops' bit for bit;
// the fused op takes each row's range while the row is in cache and saves one op and one
// parallel pass. Runs after layer_norm_fusion, which makes the LayerNorm.
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {

Status layer_norm_quantize_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& dq = graph.nodes[i];
    if (!is_onnx(dq, "DynamicQuantizeLinear") || dq.inputs.size() != 1 || dq.outputs.size() != 3) continue;
    bool all_named = true;
    for (const auto& o : dq.outputs) all_named = all_named && !o.empty();
    const int ln = index.producer(dq.inputs[0]);
    if (!all_named || ln < 0 || dead.count(ln)) continue;
    Node& norm = graph.nodes[static_cast<size_t>(ln)];
    if (norm.op_type != "LayerNorm" || norm.domain != kInternalDomain || norm.outputs.size() != 1) continue;
    ctx.log.push_back(pass_name + ": fused LayerNorm '" + norm.name + "' + DynamicQuantizeLinear '" + dq.name +
                      "' -> LayerNormDynamicQuantize (" + norm.outputs[0] + ", " + dq.outputs[0] + ")");
    norm.op_type = "LayerNormDynamicQuantize";
    norm.name += "/quantized";
    norm.outputs.insert(norm.outputs.end(), dq.outputs.begin(), dq.outputs.end());
    dead.insert(static_cast<int>(i));
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
