// Pass identity_removal: Identity(x) -> y is dropped and every consumer of y
// reads x instead. Kept when y is a graph output (its name is the contract) or
// when a subgraph captures y by name.
#include "graph/passes/passes.h"

namespace glassbox::graph::passes {

Status identity_removal(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  std::set<std::string> graph_outputs;
  for (const auto& o : graph.outputs) graph_outputs.insert(o.name);
  const std::set<std::string> captured = names_used_in_subgraphs(graph);
  std::map<std::string, std::string> rename;  // removed output -> its source
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (auto& node : graph.nodes) {
    for (auto& in : node.inputs) {
      auto it = rename.find(in);
      if (it != rename.end()) in = it->second;
    }
    const bool removable = node.op_type == "Identity" && (node.domain.empty() || node.domain == "ai.onnx") &&
                           node.inputs.size() == 1 && node.outputs.size() == 1 && !node.inputs[0].empty() &&
                           !graph_outputs.count(node.outputs[0]) && !captured.count(node.outputs[0]);
    if (removable) {
      rename[node.outputs[0]] = node.inputs[0];
      ctx.log.push_back(pass_name + ": removed Identity '" + node.name + "' (" + node.outputs[0] + " -> " +
                        node.inputs[0] + ")");
      continue;
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return {};
}

}  // namespace glassbox::graph::passes
