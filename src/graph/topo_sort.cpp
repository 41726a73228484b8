#include "graph/topo_sort.h"

#include <queue>
#include <unordered_map>

namespace glassbox::graph {

Status topo_sort(std::vector<Node>& nodes, const std::set<std::string>& available) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& out : nodes[i].outputs) {
      if (out.empty()) continue;
      if (available.count(out))
        return make_error(ErrorCode::kInvalidModel, "output '" + out + "' redefines a graph input or initializer",
                          "node '" + nodes[i].name + "' (" + nodes[i].op_type + ")");
      if (!producer.emplace(out, i).second)
        return make_error(ErrorCode::kInvalidModel,
                          "value '" + out + "' is produced twice (also by node '" + nodes[producer[out]].name + "')",
                          "node '" + nodes[i].name + "' (" + nodes[i].op_type + ")");
    }
  }
  std::vector<size_t> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<size_t> deps;
    for (const auto& in : nodes[i].inputs) {
      if (in.empty() || available.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return make_error(ErrorCode::kInvalidModel, "input '" + in + "' is not produced by any node, graph input or initializer",
                          "node '" + nodes[i].name + "' (" + nodes[i].op_type + ")", "re-export the model");
      deps.insert(it->second);
    }
    // Subgraph inputs that refer to values of this graph also order the node.
    for (const auto& [key, attr] : nodes[i].attributes) {
      (void)key;
      std::vector<const Graph*> subs;
      if (attr.g) subs.push_back(attr.g.get());
      for (const auto& sg : attr.graphs) subs.push_back(sg.get());
      for (const Graph* sg : subs) {
        for (const auto& sn : sg->nodes)
          for (const auto& in : sn.inputs) {
            auto it = producer.find(in);
            if (!in.empty() && it != producer.end()) deps.insert(it->second);
          }
      }
    }
    deps.erase(i);
    pending[i] = deps.size();
    for (size_t d : deps) users[d].push_back(i);
  }
  // Kahn's algorithm, smallest index first, so a sorted file keeps its order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] != 0)
        return make_error(ErrorCode::kInvalidModel, "graph has a cycle", "node '" + nodes[i].name + "' (" + nodes[i].op_type + ")",
                          "re-export the model");
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  return {};
}

}  // namespace glassbox::graph
