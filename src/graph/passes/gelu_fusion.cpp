// Pass gelu_fusion: the erf form of GELU as torch.onnx writes it,
//   Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)   (operands of Add/Mul in either order,
//   Div by sqrt 2 also as Mul by 1/sqrt 2, the 0.5 also applied to x first)
// becomes one glassbox::Gelu(x) node (one pass over memory instead of five).
#include <cmath>

#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

bool near(float v, double want) { return std::fabs(v - want) <= 1e-6 * std::fabs(want); }

}  // namespace

Status gelu_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t e = 0; e < graph.nodes.size(); ++e) {
    const Node& erf = graph.nodes[e];
    if (!is_onnx(erf, "Erf") || erf.inputs.size() != 1 || dead.count(static_cast<int>(e))) continue;
    // Div(x, sqrt2) or Mul(x, 1/sqrt2) feeding the Erf.
    const int sd = index.producer(erf.inputs[0]);
    if (sd < 0 || !index.single_use(erf.inputs[0])) continue;
    const Node& scale = graph.nodes[sd];
    float c = 0;
    std::string x;
    if (is_onnx(scale, "Div") && scale.inputs.size() == 2 && scalar_constant(graph, scale.inputs[1], &c) && near(c, std::sqrt(2.0)))
      x = scale.inputs[0];
    else if (is_onnx(scale, "Mul") && scale.inputs.size() == 2) {
      for (int k = 0; k < 2 && x.empty(); ++k)
        if (scalar_constant(graph, scale.inputs[k], &c) && near(c, 1 / std::sqrt(2.0))) x = scale.inputs[1 - k];
    }
    if (x.empty()) continue;
    // Add(erf, 1)
    const int a = index.sole_consumer(erf.outputs[0], static_cast<int>(e));
    if (a < 0 || !is_onnx(graph.nodes[a], "Add")) continue;
    const std::string one = other_input(graph.nodes[a], erf.outputs[0]);
    if (one.empty() || !scalar_constant(graph, one, &c) || c != 1.f) continue;
    // Mul(x, add) then Mul(., 0.5) -- or Mul(add, Mul(x, 0.5)).
    const int m1 = index.sole_consumer(graph.nodes[a].outputs[0], a);
    if (m1 < 0 || !is_onnx(graph.nodes[m1], "Mul")) continue;
    const std::string m1_other = other_input(graph.nodes[m1], graph.nodes[a].outputs[0]);
    std::set<int> nodes{sd, static_cast<int>(e), a, m1};
    int last = -1;
    if (m1_other == x) {
      const int m2 = index.sole_consumer(graph.nodes[m1].outputs[0], m1);
      if (m2 < 0 || !is_onnx(graph.nodes[m2], "Mul")) continue;
      const std::string half = other_input(graph.nodes[m2], graph.nodes[m1].outputs[0]);
      if (half.empty() || !scalar_constant(graph, half, &c) || c != 0.5f) continue;
      nodes.insert(m2);
      last = m2;
    } else {
      const int h = index.producer(m1_other);  // Mul(x, 0.5) computed first
      if (h < 0 || !index.single_use(m1_other) || !is_onnx(graph.nodes[h], "Mul")) continue;
      const std::string half = other_input(graph.nodes[h], x);
      if (half.empty() || !scalar_constant(graph, half, &c) || c != 0.5f) continue;
      nodes.insert(h);
      last = m1;
    }
    // x feeds exactly the scale node and the multiply by x (or by 0.5): nothing else is lost.
    bool overlap = false;
    for (int n : nodes) overlap = overlap || dead.count(n);
    if (overlap) continue;
    Node gelu;
    gelu.name = graph.nodes[last].name + "/gelu_fused";
    gelu.op_type = "Gelu";
    gelu.domain = kInternalDomain;
    gelu.inputs = {x};
    gelu.outputs = {graph.nodes[last].outputs[0]};
    ctx.log.push_back(pass_name + ": fused " + std::to_string(nodes.size()) + " nodes into Gelu '" + gelu.name + "' (" +
                      x + " -> " + gelu.outputs[0] + ")");
    nodes.erase(last);
    dead.insert(nodes.begin(), nodes.end());
    graph.nodes[last] = std::move(gelu);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
