// Pass decoder_attention_fusion: a decoder's attention as torch.onnx writes it (after
// attention_softmax_fusion made the score normalization one node), over head-major keys and values
// K, V [batch, kv_heads, tokens, head_dim] (present = Concat(past, new)):
//   Y = MatMul(ScaledMaskedSoftmax(MatMul(Q, Transpose[0,1,3,2](R(K))), mask), R(V))
// where R is nothing (multi-head attention, GPT-2) or repeat_kv (grouped-query attention, Llama),
//   R(X) = Reshape(Expand(Unsqueeze(X, axes [2]), e), r),
// becomes glassbox::DecoderAttention(Q, K, V, mask, e_K, r_K, e_V, r_V): query head h reads key/value
// head h / group in place, so the g copies of every key and value and the key transpose — work that
// grows with the past at every decode step — disappear. e and r depend on the past length, so they
// stay inputs and the op checks at run time that they are that repeat. Every swallowed value must have
// no other reader; K and V (present, a graph output) are only read.
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// True if the Unsqueeze inserts axis 2 only (attribute before opset 13, an int64 initializer from 13).
bool unsqueezes_axis_2(const Graph& g, const Node& n) {
  if (!is_onnx(n, "Unsqueeze")) return false;
  if (const Attribute* a = n.attr("axes")) return n.inputs.size() == 1 && a->ints == std::vector<int64_t>{2};
  if (n.inputs.size() != 2) return false;
  auto it = g.initializers.find(n.inputs[1]);
  return it != g.initializers.end() && it->second.dtype() == DataType::kInt64 && it->second.numel() == 1 &&
         it->second.data<int64_t>()[0] == 2;
}

struct Source {
  std::string value;                // K or V as the fused node reads it
  std::string expand, reshape;      // repeat_kv's shape inputs; "" without a repeat
  std::vector<int> nodes;           // the repeat's nodes, swallowed
};

// `value` = R(source): the repeat_kv chain when it is there and single-use, else `value` itself.
Source match_source(const Graph& g, const GraphIndex& index, const std::string& value) {
  Source s{value, "", "", {}};
  const int rs = index.producer(value);
  if (rs < 0 || !index.single_use(value) || !is_onnx(g.nodes[rs], "Reshape") || g.nodes[rs].inputs.size() != 2) return s;
  if (const Attribute* az = g.nodes[rs].attr("allowzero"); az && az->i != 0) return s;
  const std::string& expanded = g.nodes[rs].inputs[0];
  const int ex = index.producer(expanded);
  if (ex < 0 || !index.single_use(expanded) || !is_onnx(g.nodes[ex], "Expand") || g.nodes[ex].inputs.size() != 2) return s;
  const std::string& unsqueezed = g.nodes[ex].inputs[0];
  const int un = index.producer(unsqueezed);
  if (un < 0 || !index.single_use(unsqueezed) || !unsqueezes_axis_2(g, g.nodes[un])) return s;
  return Source{g.nodes[un].inputs[0], g.nodes[ex].inputs[1], g.nodes[rs].inputs[1], {un, ex, rs}};
}

}  // namespace

Status decoder_attention_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t s = 0; s < graph.nodes.size(); ++s) {
    AttentionCore core;
    if (!match_attention_core(graph, index, s, &core)) continue;
    const Node& sm = graph.nodes[s];
    const int qk = core.qk, pv = core.pv;
    const std::string& kt_value = graph.nodes[qk].inputs[1];
    const int kt = index.producer(kt_value);
    if (kt < 0 || !index.single_use(kt_value) || !has_perm(graph.nodes[kt], {0, 1, 3, 2})) continue;
    const Source k = match_source(graph, index, graph.nodes[kt].inputs[0]);
    const Source v = match_source(graph, index, graph.nodes[pv].inputs[1]);
    std::set<int> swallowed{qk, kt, static_cast<int>(s)};
    swallowed.insert(k.nodes.begin(), k.nodes.end());
    swallowed.insert(v.nodes.begin(), v.nodes.end());
    bool taken = dead.count(pv) > 0;
    for (int n : swallowed) taken = taken || dead.count(n);
    if (taken) continue;
    Node fused;
    fused.name = graph.nodes[pv].name + "/decoder_attention_fused";
    fused.op_type = "DecoderAttention";
    fused.domain = kInternalDomain;
    fused.inputs = {graph.nodes[qk].inputs[0], k.value, v.value, sm.inputs[1], k.expand, k.reshape, v.expand, v.reshape};
    while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {graph.nodes[pv].outputs[0]};
    fused.attributes["scale"] = sm.attributes.count("scale") ? sm.attributes.at("scale") : float_attr("scale", 1.f);
    const std::string repeats = std::string(k.nodes.empty() ? "" : "K's") + (k.nodes.empty() || v.nodes.empty() ? "" : " and ") +
                                (v.nodes.empty() ? "" : "V's");
    ctx.log.push_back(pass_name + ": fused " + (repeats.empty() ? "" : repeats + " repeat_kv (Unsqueeze/Expand/Reshape), ") +
                      "Transpose, MatMul, ScaledMaskedSoftmax, MatMul '" + graph.nodes[pv].name + "' -> DecoderAttention");
    dead.insert(swallowed.begin(), swallowed.end());
    graph.nodes[static_cast<size_t>(pv)] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
