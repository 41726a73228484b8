// Pass dead_node_elimination: a node none of whose outputs is consumed (by a
// later node, a subgraph capture, or as a graph output) is removed; walking
// backwards removes whole dead chains in one sweep. Unused initializers are
// dropped too so they cost no memory.
#include "graph/passes/passes.h"

#include <algorithm>

namespace glassbox::graph::passes {

Status dead_node_elimination(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  std::set<std::string> live;
  for (const auto& o : graph.outputs) live.insert(o.name);
  std::vector<bool> keep(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    const bool used = std::any_of(node.outputs.begin(), node.outputs.end(),
                                  [&](const std::string& o) { return !o.empty() && live.count(o); });
    if (!used) {
      ctx.log.push_back(pass_name + ": removed " + node.op_type + " '" + node.name + "' (no output is used)");
      continue;
    }
    keep[i] = true;
    collect_used_names(node, live);
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (keep[i]) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    if (!live.count(it->first)) {
      ctx.log.push_back(pass_name + ": dropped unused initializer '" + it->first + "'");
      graph.initializer_info.erase(it->first);
      it = graph.initializers.erase(it);
    } else {
      ++it;
    }
  }
  return {};
}

}  // namespace glassbox::graph::passes
