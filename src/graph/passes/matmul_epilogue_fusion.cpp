// Pass matmul_epilogue_fusion: a linear layer and what follows it,
//   MatMul(A, W) -> Add(bias) [-> Gelu] [-> Add(residual)]
// with W a 2-D float32 initializer [K, N] and bias a float32 initializer [N],
// becomes one glassbox::FusedMatMul(A, W, bias, residual) node whose epilogue
// (bias, GELU, residual add) runs while each output tile is still in cache.
// The quantized form, glassbox::MatMulIntegerToFloat (made by quantized_matmul_fusion,
// its bias already inside) [-> Gelu] [-> Add(residual)], takes the GELU as its attribute
// activation and the residual as its input 7 the same way.
// Run after gelu_fusion so the GELU is already one node.
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// What follows a linear layer's output and joins its epilogue.
struct Epilogue {
  std::set<int> nodes;
  int last = -1;
  std::string activation, residual;
};

// From node `last` (its output is the linear layer's value): [Gelu] [-> Add(residual)].
Epilogue follow_epilogue(const Graph& graph, const GraphIndex& index, int last) {
  Epilogue e;
  e.last = last;
  int next = index.sole_consumer(graph.nodes[last].outputs[0], last);
  if (next >= 0 && graph.nodes[next].op_type == "Gelu" && graph.nodes[next].domain == kInternalDomain) {
    e.activation = "gelu_erf";
    e.nodes.insert(next);
    e.last = next;
    next = index.sole_consumer(graph.nodes[e.last].outputs[0], e.last);
  }
  // Add(residual): the other operand must not be produced later (it never is in a sorted graph).
  if (next >= 0 && is_onnx(graph.nodes[next], "Add")) {
    const std::string r = other_input(graph.nodes[next], graph.nodes[e.last].outputs[0]);
    if (!r.empty() && !graph.initializers.count(r)) {
      e.residual = r;
      e.nodes.insert(next);
      e.last = next;
    }
  }
  return e;
}

// MatMul(A, W [K, N] float32 initializer) -> Add(bias [N]) + epilogue -> FusedMatMul.
bool match_float(const Graph& graph, const GraphIndex& index, int m, Node& fused, Epilogue& e) {
  const Node& mm = graph.nodes[m];
  if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
  auto w = graph.initializers.find(mm.inputs[1]);
  if (w == graph.initializers.end() || w->second.dtype() != DataType::kFloat32 || w->second.rank() != 2) return false;
  const int a = index.sole_consumer(mm.outputs[0], m);
  if (a < 0 || !is_onnx(graph.nodes[a], "Add")) return false;
  const std::string bias = other_input(graph.nodes[a], mm.outputs[0]);
  if (bias.empty() || vector_constant(graph, bias) != w->second.shape()[1]) return false;
  e = follow_epilogue(graph, index, a);
  e.nodes.insert({m, a});
  fused.name = mm.name + "/fused";
  fused.op_type = "FusedMatMul";
  fused.inputs = {mm.inputs[0], mm.inputs[1], bias};
  return true;
}

// MatMulIntegerToFloat without an epilogue yet, followed by a Gelu or a residual Add.
bool match_quantized(const Graph& graph, const GraphIndex& index, int m, Node& fused, Epilogue& e) {
  const Node& q = graph.nodes[m];
  if (q.op_type != "MatMulIntegerToFloat" || q.domain != kInternalDomain || q.inputs.size() > 7 ||
      q.attributes.count("activation"))
    return false;
  e = follow_epilogue(graph, index, m);
  if (e.nodes.empty()) return false;
  e.nodes.insert(m);
  fused.name = q.name + "/epilogue";
  fused.op_type = "MatMulIntegerToFloat";
  fused.inputs = q.inputs;
  fused.inputs.resize(7);  // the optional zero points and bias stay where they were
  fused.attributes = q.attributes;
  return true;
}

}  // namespace

Status matmul_epilogue_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const int m = static_cast<int>(i);
    Node fused;
    Epilogue e;
    if (!match_float(graph, index, m, fused, e) && !match_quantized(graph, index, m, fused, e)) continue;
    bool overlap = false;
    for (int n : e.nodes) overlap = overlap || dead.count(n);
    if (overlap) continue;
    fused.domain = kInternalDomain;
    if (!e.residual.empty()) fused.inputs.push_back(e.residual);
    while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {graph.nodes[e.last].outputs[0]};
    if (!e.activation.empty()) fused.attributes["activation"] = string_attr("activation", e.activation);
    const bool quantized = fused.op_type == "MatMulIntegerToFloat";
    ctx.log.push_back(pass_name + ": fused " + graph.nodes[m].op_type + " '" + graph.nodes[m].name + "'" +
                      (quantized ? "" : " + bias") + (e.activation.empty() ? "" : " + " + e.activation) +
                      (e.residual.empty() ? "" : " + residual '" + e.residual + "'") + " -> " + fused.op_type + " (" +
                      std::to_string(e.nodes.size()) + " nodes)");
    e.nodes.erase(e.last);
    dead.insert(e.nodes.begin(), e.nodes.end());
    graph.nodes[e.last] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
