// Pass layer_norm_fusion: LayerNorm over the last axis as torch.onnx (opset < 17) writes it,
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes=[-1]);
//   y = Add(Mul(Div(d, Sqrt(Add(v, eps))), gamma), beta)
// with gamma/beta float32 initializers [C], becomes glassbox::LayerNorm(x, gamma, beta)
// (one pass computing mean and variance per row instead of nine elementwise ops).
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// ReduceMean over the last axis only, keepdims = 1, axes as an attribute (opset < 18).
bool reduce_mean_last(const Node& n) {
  if (!is_onnx(n, "ReduceMean") || n.inputs.size() != 1) return false;
  const Attribute* axes = n.attr("axes");
  const Attribute* keep = n.attr("keepdims");
  return axes && axes->ints.size() == 1 && axes->ints[0] == -1 && (!keep || keep->i == 1);
}

}  // namespace

Status layer_norm_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t r = 0; r < graph.nodes.size(); ++r) {
    const Node& mean = graph.nodes[r];
    if (!reduce_mean_last(mean) || dead.count(static_cast<int>(r))) continue;
    const std::string x = mean.inputs[0];
    const int sub = index.sole_consumer(mean.outputs[0], static_cast<int>(r));
    if (sub < 0 || !is_onnx(graph.nodes[sub], "Sub") || graph.nodes[sub].inputs.size() != 2 ||
        graph.nodes[sub].inputs[0] != x || graph.nodes[sub].inputs[1] != mean.outputs[0])
      continue;
    const std::string d = graph.nodes[sub].outputs[0];
    if (index.uses(d) != 2) continue;  // Pow and Div
    int pow = -1, div = -1;
    for (size_t i = static_cast<size_t>(sub) + 1; i < graph.nodes.size(); ++i) {
      const Node& n = graph.nodes[i];
      if (is_onnx(n, "Pow") && n.inputs.size() == 2 && n.inputs[0] == d) pow = static_cast<int>(i);
      if (is_onnx(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = static_cast<int>(i);
    }
    float c = 0;
    if (pow < 0 || div < 0 || !scalar_constant(graph, graph.nodes[pow].inputs[1], &c) || c != 2.f) continue;
    const int var = index.sole_consumer(graph.nodes[pow].outputs[0], pow);
    if (var < 0 || !reduce_mean_last(graph.nodes[var])) continue;
    const int add_eps = index.sole_consumer(graph.nodes[var].outputs[0], var);
    if (add_eps < 0 || !is_onnx(graph.nodes[add_eps], "Add")) continue;
    float eps = 0;
    const std::string eps_name = other_input(graph.nodes[add_eps], graph.nodes[var].outputs[0]);
    if (eps_name.empty() || !scalar_constant(graph, eps_name, &eps)) continue;
    const int sq = index.sole_consumer(graph.nodes[add_eps].outputs[0], add_eps);
    if (sq < 0 || !is_onnx(graph.nodes[sq], "Sqrt")) continue;
    if (graph.nodes[div].inputs[1] != graph.nodes[sq].outputs[0] || !index.single_use(graph.nodes[sq].outputs[0])) continue;
    const int mul = index.sole_consumer(graph.nodes[div].outputs[0], div);
    if (mul < 0 || !is_onnx(graph.nodes[mul], "Mul")) continue;
    const std::string gamma = other_input(graph.nodes[mul], graph.nodes[div].outputs[0]);
    const int64_t C = gamma.empty() ? 0 : vector_constant(graph, gamma);
    if (C == 0) continue;
    const int add = index.sole_consumer(graph.nodes[mul].outputs[0], mul);
    if (add < 0 || !is_onnx(graph.nodes[add], "Add")) continue;
    const std::string beta = other_input(graph.nodes[add], graph.nodes[mul].outputs[0]);
    if (beta.empty() || vector_constant(graph, beta) != C) continue;
    std::set<int> nodes{static_cast<int>(r), sub, pow, var, add_eps, sq, div, mul, add};
    bool overlap = false;
    for (int n : nodes) overlap = overlap || dead.count(n);
    if (overlap) continue;
    Node ln;
    ln.name = graph.nodes[add].name + "/layer_norm_fused";
    ln.op_type = "LayerNorm";
    ln.domain = kInternalDomain;
    ln.inputs = {x, gamma, beta};
    ln.outputs = {graph.nodes[add].outputs[0]};
    ln.attributes["epsilon"] = float_attr("epsilon", eps);
    ctx.log.push_back(pass_name + ": fused 9 nodes into LayerNorm '" + ln.name + "' (" + x + " -> " + ln.outputs[0] + ")");
    nodes.erase(add);
    dead.insert(nodes.begin(), nodes.end());
    graph.nodes[add] = std::move(ln);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
