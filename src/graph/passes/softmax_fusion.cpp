// Pass attention_softmax_fusion: the score normalization of attention as torch.onnx writes it,
//   Softmax(Add(Div(S, c), mask), axis = -1)   (also Mul(S, 1/c); the Add operands in either order)
// with c a float32 scalar initializer becomes glassbox::ScaledMaskedSoftmax(S, mask, scale = 1/c):
// one pass over the [batch, heads, q, k] scores instead of three. The mask (padding bias) may
// broadcast; the op checks it at run time.
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {

Status attention_softmax_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t s = 0; s < graph.nodes.size(); ++s) {
    const Node& sm = graph.nodes[s];
    if (!is_onnx(sm, "Softmax") || sm.inputs.size() != 1 || sm.outputs.size() != 1) continue;
    const Attribute* axis = sm.attr("axis");
    if (!axis || axis->i != -1) continue;  // default axis differs by opset; torch writes -1
    const int add = index.producer(sm.inputs[0]);
    if (add < 0 || !index.single_use(sm.inputs[0]) || !is_onnx(graph.nodes[add], "Add") || graph.nodes[add].inputs.size() != 2)
      continue;
    int scale_node = -1;
    std::string mask;
    float scale = 0;
    for (int k = 0; k < 2 && scale_node < 0; ++k) {
      const std::string& cand = graph.nodes[add].inputs[k];
      const int p = index.producer(cand);
      if (p < 0 || !index.single_use(cand) || graph.nodes[p].inputs.size() != 2) continue;
      float c = 0;
      if (is_onnx(graph.nodes[p], "Div") && scalar_constant(graph, graph.nodes[p].inputs[1], &c) && c != 0.f) scale = 1.f / c;
      else if (is_onnx(graph.nodes[p], "Mul") && scalar_constant(graph, graph.nodes[p].inputs[1], &c)) scale = c;
      else continue;
      scale_node = p;
      mask = graph.nodes[add].inputs[1 - k];
    }
    if (scale_node < 0 || mask.empty() || dead.count(scale_node) || dead.count(add)) continue;
    Node fused;
    fused.name = sm.name + "/masked_softmax_fused";
    fused.op_type = "ScaledMaskedSoftmax";
    fused.domain = kInternalDomain;
    fused.inputs = {graph.nodes[scale_node].inputs[0], mask};
    fused.outputs = {sm.outputs[0]};
    fused.attributes["scale"] = float_attr("scale", scale);
    ctx.log.push_back(pass_name + ": fused " + graph.nodes[scale_node].op_type + "/Add/Softmax '" + sm.name +
                      "' -> ScaledMaskedSoftmax (scale " + std::to_string(scale) + ", mask '" + mask + "')");
    dead.insert(scale_node);
    dead.insert(add);
    graph.nodes[s] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
