// Pass kv_cache_binding (only for SessionOptions::kv_cache_inputs, the generation session's past inputs): each
//   present = Concat(past, new, axis 2)   (a graph output, read by one DecoderAttention as K or V and by Shape)
// is taken out of the graph: the DecoderAttention reads the new keys/values and the caller's cache bound to the
// past input (attributes cache_k / cache_v, Session::run_bound) — it appends the new positions to the cache and
// attends over it in place — and each Shape(present) becomes Shape(past) + Shape(new) on axis 2. The past input
// is then read for its shape only. onnxruntime-genai's form has no Concat: the past input is read by one
// com.microsoft GroupQueryAttention as past_key (input 3) or past_value (4), whose present output (1 or 2) is a
// graph output nothing reads; that node becomes glassbox::GroupQueryAttention with the same attributes plus
// cache_k / cache_v, appends the rotated new keys/values to the bound cache and attends over it in place, and its
// presents leave the graph. All or none: if one named input does not fit, nothing changes and the log says why
// (the caller keeps copying). Runs after decoder_attention_fusion.
#include <algorithm>
#include <array>

#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

bool is_attention(const Node& n) { return n.op_type == "DecoderAttention" && n.domain == kInternalDomain; }
bool is_gqa(const Node& n) { return n.op_type == "GroupQueryAttention" && n.domain == "com.microsoft"; }
bool is_bound(const Node& n) {
  return n.domain == kInternalDomain && (n.op_type == "DecoderAttention" || n.op_type == "GroupQueryAttention") && n.attr("cache_k");
}
bool plain_shape(const Node& n) { return is_onnx(n, "Shape") && !n.attr("start") && !n.attr("end"); }

struct Bound {
  std::string past, fresh, present;
  int concat = -1, attention = -1, slot = 0;  // the attention reads present as input `slot` (1: K, 2: V)
  std::vector<int> shapes;                    // Shape(present) nodes
  bool gqa = false;                           // onnxruntime-genai's form: no Concat, `attention` is the GQA node
};

// Readers of `value` other than the whole graph's outputs, as (node, input slot).
std::vector<std::pair<int, int>> readers(const Graph& g, const std::string& value) {
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k)
      if (g.nodes[i].inputs[k] == value) out.emplace_back(static_cast<int>(i), static_cast<int>(k));
  return out;
}

bool is_graph_output(const Graph& g, const std::string& value) {
  return std::any_of(g.outputs.begin(), g.outputs.end(), [&](const ValueInfo& o) { return o.name == value; });
}

// The onnxruntime-genai form: `past` is read only by GroupQueryAttention node `r.first` as past_key or past_value,
// and the matching present output is a graph output nothing reads (bind_one checked the subgraphs). Why not ("" when it is), filling *b.
std::string bind_gqa(const Graph& g, std::pair<int, int> r, Bound* b) {
  const Node& n = g.nodes[static_cast<size_t>(r.first)];
  if (r.second != 3 && r.second != 4) return "GroupQueryAttention '" + n.name + "' reads it as input " + std::to_string(r.second) + ", not past_key (3) or past_value (4)";
  b->gqa = true;
  b->attention = r.first;
  b->slot = r.second - 2;
  if (n.outputs.size() <= static_cast<size_t>(b->slot) || n.outputs[static_cast<size_t>(b->slot)].empty())
    return "GroupQueryAttention '" + n.name + "' has no present output " + std::to_string(b->slot);
  b->present = n.outputs[static_cast<size_t>(b->slot)];
  if (!is_graph_output(g, b->present)) return "'" + b->present + "' is not a graph output";
  if (auto rd = readers(g, b->present); !rd.empty()) {
    const Node& r0 = g.nodes[static_cast<size_t>(rd[0].first)];
    return "'" + b->present + "' is read by " + r0.op_type + " '" + r0.name + "'";
  }
  return "";
}

// Why `past` cannot be bound ("" when it can), filling *b.
std::string bind_one(const Graph& g, const std::string& past, const std::set<std::string>& in_subgraphs, Bound* b) {
  b->past = past;
  int rank = -1;
  for (const auto& in : g.inputs)
    if (in.name == past) rank = in.has_shape ? static_cast<int>(in.dims.size()) : -1;
  if (rank != 4) return "it is not a declared rank-4 graph input";
  if (in_subgraphs.count(past)) return "a subgraph reads it (a legacy merged If: see pass cache_branch_inlining)";
  const auto past_readers = readers(g, past);
  if (past_readers.size() == 1 && is_gqa(g.nodes[static_cast<size_t>(past_readers[0].first)]))
    return bind_gqa(g, past_readers[0], b);
  for (const auto& [i, k] : past_readers) {
    const Node& n = g.nodes[static_cast<size_t>(i)];
    if (plain_shape(n)) continue;
    if (b->concat >= 0 || !is_onnx(n, "Concat")) return "it is read by " + n.op_type + " '" + n.name + "'";
    b->concat = i;
  }
  if (b->concat < 0) return "no Concat reads it";
  const Node& cat = g.nodes[b->concat];
  const Attribute* axis = cat.attr("axis");
  if (cat.inputs.size() != 2 || cat.inputs[0] != past || !axis || (axis->i != 2 && axis->i != -2))
    return "Concat '" + cat.name + "' is not Concat(past, new, axis 2)";
  b->fresh = cat.inputs[1];
  b->present = cat.outputs[0];
  if (!is_graph_output(g, b->present)) return "'" + b->present + "' is not a graph output";
  for (const auto& [i, k] : readers(g, b->present)) {
    const Node& n = g.nodes[static_cast<size_t>(i)];
    if (plain_shape(n)) {
      b->shapes.push_back(i);
    } else if (is_attention(n) && (k == 1 || k == 2) && b->attention < 0 && !n.attr("cache_k")) {
      b->attention = i;
      b->slot = k;
    } else {
      return "'" + b->present + "' is read by " + n.op_type + " '" + n.name + "'";
    }
  }
  if (b->attention < 0) return "no DecoderAttention reads '" + b->present + "' (decoder_attention_fusion did not apply)";
  if (in_subgraphs.count(b->present)) return "a subgraph reads it";
  return "";
}

// Shape(present) -> Add(Shape(past), Mul(Shape(new), [0, 0, 1, 0])), written where the Shape node was.
void rewrite_shape(Graph& g, const Bound& b, int node, const std::string& axis_2, std::vector<Node>* before) {
  const std::string base = g.nodes[node].outputs[0] + "/kv_cache_shape";  // output names are unique, node names need not be
  auto make = [&](const char* op, std::vector<std::string> in, const std::string& out) {
    Node n;
    n.name = base + "/" + op + std::to_string(before->size());
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    before->push_back(std::move(n));
  };
  make("Shape", {b.past}, base + "/past");
  make("Shape", {b.fresh}, base + "/new");
  make("Mul", {base + "/new", axis_2}, base + "/new_axis_2");
  Node& add = g.nodes[node];
  add.op_type = "Add";
  add.domain.clear();
  add.attributes.clear();
  add.inputs = {base + "/past", base + "/new_axis_2"};
}

}  // namespace

Status kv_cache_binding(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  if (ctx.kv_cache_inputs.empty()) return {};
  size_t already = 0;  // a plan's passes run again on the load-time graph, already bound
  for (const auto& n : graph.nodes)
    if (is_bound(n)) already += 2;
  if (already > 0) {
    ctx.kv_cache_bound = already == ctx.kv_cache_inputs.size();
    return {};
  }
  std::vector<Bound> bound(ctx.kv_cache_inputs.size());
  const std::set<std::string> in_subgraphs = names_used_in_subgraphs(graph);
  for (size_t i = 0; i < bound.size(); ++i)
    if (std::string why = bind_one(graph, ctx.kv_cache_inputs[i], in_subgraphs, &bound[i]); !why.empty()) {
      ctx.log.push_back(pass_name + ": '" + ctx.kv_cache_inputs[i] + "' is not bound: " + why + "; no past input is (all or none)");
      return {};
    }
  std::map<int, std::array<const Bound*, 3>> attentions;  // per DecoderAttention: its K (1) and V (2) bindings
  for (const auto& b : bound) attentions[b.attention][static_cast<size_t>(b.slot)] = &b;
  for (const auto& [node, kv] : attentions)
    if (!kv[1] || !kv[2]) {
      ctx.log.push_back(pass_name + ": " + graph.nodes[node].op_type + " '" + graph.nodes[node].name +
                        "' reads only one bound cache (K and V come together); no past input is bound (all or none)");
      return {};
    }
  const std::string axis_2 = "glassbox/kv_cache_binding/axis_2", reader = graph.nodes[static_cast<size_t>(attentions.begin()->first)].op_type;
  if (std::any_of(bound.begin(), bound.end(), [](const Bound& b) { return !b.shapes.empty(); })) {
    GB_ASSIGN_OR_RETURN(Tensor onehot, Tensor::allocate(DataType::kInt64, {4}));
    onehot.mutable_data<int64_t>()[2] = 1;  // allocate zero-fills
    graph.initializers[axis_2] = std::move(onehot);
  }
  std::map<int, std::vector<Node>> inserted;  // new nodes, placed before the node index
  std::set<int> dead;
  std::set<std::string> presents;
  for (const auto& b : bound) {
    for (int s : b.shapes) rewrite_shape(graph, b, s, axis_2, &inserted[s]);
    if (b.concat >= 0) dead.insert(b.concat);
    presents.insert(b.present);
  }
  for (const auto& [node, kv] : attentions) {
    Node& a = graph.nodes[static_cast<size_t>(node)];
    if (kv[1]->gqa) {  // reads the past inputs for their shape; its presents are no longer written
      a.domain = kInternalDomain;
      a.outputs[1].clear();
      a.outputs[2].clear();
      a.attributes["cache_k"] = string_attr("cache_k", kv[1]->past);
      a.attributes["cache_v"] = string_attr("cache_v", kv[2]->past);
      continue;
    }
    a.inputs.resize(8);
    a.inputs[1] = kv[1]->fresh;
    a.inputs[2] = kv[2]->fresh;
    a.inputs.push_back(kv[1]->past);
    a.inputs.push_back(kv[2]->past);
    a.attributes["cache_k"] = string_attr("cache_k", kv[1]->past);
    a.attributes["cache_v"] = string_attr("cache_v", kv[2]->past);
  }
  std::vector<ValueInfo> outputs;
  for (auto& o : graph.outputs)
    if (!presents.count(o.name)) outputs.push_back(std::move(o));
  graph.outputs = std::move(outputs);
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (auto it = inserted.find(static_cast<int>(i)); it != inserted.end())
      for (auto& n : it->second) nodes.push_back(std::move(n));
    if (!dead.count(static_cast<int>(i))) nodes.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(nodes);
  ctx.kv_cache_bound = true;
  ctx.log.push_back(pass_name + ": bound " + std::to_string(bound.size()) + " past inputs to the caller's KV cache (" +
                    std::to_string(attentions.size()) + " " + reader + " read it in place; their presents left the outputs)");
  return {};
}

}  // namespace glassbox::graph::passes
