// Pass constant_folding: a node whose inputs are all initializers (or absent)
// is evaluated once with the runtime's own op and its outputs become
// initializers. Skipped: random ops (a new draw per run is their meaning),
// nodes with subgraphs, and results over max_folded_constant_bytes.
#include "graph/passes/passes.h"

namespace glassbox::graph::passes {
namespace {

bool is_nondeterministic(const std::string& op) {
  return op == "RandomNormal" || op == "RandomUniform" || op == "RandomNormalLike" || op == "RandomUniformLike" ||
         op == "Multinomial" || op == "Bernoulli" || op == "Dropout";
}

}  // namespace

Status constant_folding(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  if (!ctx.evaluate) return {};
  std::set<std::string> graph_outputs;
  for (const auto& o : graph.outputs) graph_outputs.insert(o.name);
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (auto& node : graph.nodes) {
    bool foldable = (node.domain.empty() || node.domain == "ai.onnx") && !is_nondeterministic(node.op_type) &&
                    !node_has_subgraph(node) && !node.outputs.empty();
    std::vector<const Tensor*> inputs;
    for (const auto& in : node.inputs) {
      if (!foldable) break;
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = graph.initializers.find(in);
      if (it == graph.initializers.end()) foldable = false;
      else inputs.push_back(&it->second);
    }
    for (const auto& o : node.outputs) foldable = foldable && !o.empty() && !graph.initializers.count(o);
    if (!foldable) {
      kept.push_back(std::move(node));
      continue;
    }
    auto outs = ctx.evaluate(node, inputs);
    // An op that fails here (or refuses to run on constants) simply stays a node:
    // the same error, if real, surfaces at run time with full context.
    bool ok = outs.ok() && outs->size() == node.outputs.size();
    if (ok)
      for (const auto& t : *outs)
        ok = ok && t.defined() && static_cast<int64_t>(t.nbytes()) <= ctx.max_folded_constant_bytes;
    if (!ok) {
      kept.push_back(std::move(node));
      continue;
    }
    std::string shapes;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      Tensor& t = (*outs)[i];
      shapes += (i ? ", " : "") + node.outputs[i] + " " + dtype_name(t.dtype()) + shape_to_string(t.shape());
      set_initializer(graph, node.outputs[i], std::move(t));
    }
    ctx.log.push_back(pass_name + ": folded " + node.op_type + " '" + node.name + "' -> " + shapes);
  }
  graph.nodes = std::move(kept);
  (void)graph_outputs;
  return {};
}

}  // namespace glassbox::graph::passes
