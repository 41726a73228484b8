// Pass matmul_epilogue_fusion: a linear layer and what follows it,
//   MatMul(A, W) -> Add(bias) [-> Gelu] [-> Add(residual)]
// with W a 2-D float32 initializer [K, N] and bias a float32 initializer [N],
// becomes one glassbox::FusedMatMul(A, W, bias, residual) node whose epilogue
// (bias, GELU, residual add) runs while each output tile is still in cache.
// Run after gelu_fusion so the GELU is already one node.
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {

Status matmul_epilogue_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t m = 0; m < graph.nodes.size(); ++m) {
    const Node& mm = graph.nodes[m];
    if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) continue;
    auto w = graph.initializers.find(mm.inputs[1]);
    if (w == graph.initializers.end() || w->second.dtype() != DataType::kFloat32 || w->second.rank() != 2) continue;
    const int64_t N = w->second.shape()[1];
    // Add(bias)
    const int a = index.sole_consumer(mm.outputs[0], static_cast<int>(m));
    if (a < 0 || !is_onnx(graph.nodes[a], "Add")) continue;
    const std::string bias = other_input(graph.nodes[a], mm.outputs[0]);
    if (bias.empty() || vector_constant(graph, bias) != N) continue;
    std::set<int> nodes{static_cast<int>(m), a};
    int last = a;
    std::string activation, residual;
    // [Gelu]
    int next = index.sole_consumer(graph.nodes[last].outputs[0], last);
    if (next >= 0 && graph.nodes[next].op_type == "Gelu" && graph.nodes[next].domain == kInternalDomain) {
      activation = "gelu_erf";
      nodes.insert(next);
      last = next;
      next = index.sole_consumer(graph.nodes[last].outputs[0], last);
    }
    // [Add(residual)]: the other operand must not be produced later (it never is in a sorted graph).
    if (next >= 0 && is_onnx(graph.nodes[next], "Add")) {
      const std::string r = other_input(graph.nodes[next], graph.nodes[last].outputs[0]);
      if (!r.empty() && !graph.initializers.count(r)) {
        residual = r;
        nodes.insert(next);
        last = next;
      }
    }
    bool overlap = false;
    for (int n : nodes) overlap = overlap || dead.count(n);
    if (overlap) continue;
    Node fused;
    fused.name = mm.name + "/fused";
    fused.op_type = "FusedMatMul";
    fused.domain = kInternalDomain;
    fused.inputs = {mm.inputs[0], mm.inputs[1], bias};
    if (!residual.empty()) fused.inputs.push_back(residual);
    fused.outputs = {graph.nodes[last].outputs[0]};
    if (!activation.empty()) fused.attributes["activation"] = string_attr("activation", activation);
    ctx.log.push_back(pass_name + ": fused MatMul '" + mm.name + "' + bias" + (activation.empty() ? "" : " + " + activation) +
                      (residual.empty() ? "" : " + residual '" + residual + "'") + " -> FusedMatMul (" +
                      std::to_string(nodes.size()) + " nodes)");
    nodes.erase(last);
    dead.insert(nodes.begin(), nodes.end());
    graph.nodes[last] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
