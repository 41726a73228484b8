// Pass shape_folding: Shape(x) and Size(x) become int64 constants when x's
// shape is known, either fully static (from the model / ONNX shape inference)
// or from the symbolic dims bound by the run's input shapes (the runtime
// re-runs this pass per input-shape signature). The Gather/Unsqueeze/Concat
// chains fed by those Shape nodes are then folded by constant_folding.
#include "graph/passes/passes.h"

#include <algorithm>
#include <cstring>

namespace glassbox::graph::passes {
namespace {

// The concrete shape of `name`, if every dim is known or bound.
bool known_shape(const Graph& graph, const PassContext& ctx, const std::string& name, Shape& out) {
  auto init = graph.initializers.find(name);
  if (init != graph.initializers.end()) {
    out = init->second.shape();
    return true;
  }
  const ValueInfo* vi = nullptr;
  for (const auto& in : graph.inputs)
    if (in.name == name) vi = &in;
  if (!vi) {
    auto it = graph.value_info.find(name);
    if (it != graph.value_info.end()) vi = &it->second;
  }
  if (!vi || !vi->has_shape || !vi->is_tensor) return false;
  out.clear();
  for (const auto& d : vi->dims) {
    if (d.known()) {
      out.push_back(d.value);
      continue;
    }
    auto b = d.symbol.empty() ? ctx.symbol_values.end() : ctx.symbol_values.find(d.symbol);
    if (b == ctx.symbol_values.end()) return false;
    out.push_back(b->second);
  }
  return true;
}

int64_t attr_int(const Node& n, const char* key, int64_t dflt) {
  const Attribute* a = n.attr(key);
  return a ? a->i : dflt;
}

}  // namespace

Status shape_folding(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  const std::set<std::string> captured = names_used_in_subgraphs(graph);
  for (auto& node : graph.nodes) {
    const bool onnx_domain = node.domain.empty() || node.domain == "ai.onnx";
    const bool is_shape = onnx_domain && node.op_type == "Shape";
    const bool is_size = onnx_domain && node.op_type == "Size";
    Shape shape;
    if (!(is_shape || is_size) || node.inputs.size() != 1 || node.outputs.size() != 1 || node.outputs[0].empty() ||
        graph.initializers.count(node.outputs[0]) || !known_shape(graph, ctx, node.inputs[0], shape)) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<int64_t> values;
    if (is_size) {
      GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
      values.push_back(n);
    } else {
      // Shape-15 start/end: negative counts from the back, both clamped to [0, rank].
      const int64_t rank = static_cast<int64_t>(shape.size());
      auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
      const int64_t start = clamp(attr_int(node, "start", 0));
      const int64_t end = clamp(attr_int(node, "end", rank));
      for (int64_t i = start; i < end; ++i) values.push_back(shape[static_cast<size_t>(i)]);
    }
    GB_ASSIGN_OR_RETURN(Tensor t, int64_tensor(values, is_size));
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    ctx.log.push_back(pass_name + ": " + node.op_type + " '" + node.name + "' of '" + node.inputs[0] + "' -> constant " +
                      text + "]");
    set_initializer(graph, node.outputs[0], std::move(t));
  }
  graph.nodes = std::move(kept);
  (void)captured;
  return {};
}

}  // namespace glassbox::graph::passes
