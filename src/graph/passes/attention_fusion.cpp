// Pass attention_fusion: encoder self-attention as torch.onnx writes it (after
// attention_softmax_fusion made the score normalization one node),
//   q = Transpose[0,2,1,3](Reshape(Q, [B, Sq, H, D]))
//   k = Transpose[0,2,3,1](Reshape(K, [B, Skv, H, D]))
//   v = Transpose[0,2,1,3](Reshape(V, [B, Skv, H, D]))
//   Y = Transpose[0,2,1,3](MatMul(ScaledMaskedSoftmax(MatMul(q, k), mask, scale), v))
// becomes glassbox::MultiHeadAttention(Q, K, V, mask): no head transposes, one pass per
// (batch, head) with its scores in cache. Each Reshape target is a constant [B, S, H, D]
// or torch's Concat(size(0), size(1), H, D) of the Reshape's own input (kept as 0 = "copy
// the input's dim", Reshape's meaning), with constant heads H and head size D; the op
// checks batch and token counts at run time. Every swallowed value must have no other reader.
#include <cstring>

#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// Index i if `value` is Unsqueeze(Gather(Shape(src), i), axes [0]) (torch's size(i)), else -1.
int64_t dim_of(const Graph& g, const GraphIndex& index, const std::string& value, const std::string& src) {
  const int u = index.producer(value);
  if (u < 0 || !is_onnx(g.nodes[u], "Unsqueeze")) return -1;
  const Node& un = g.nodes[u];
  std::vector<int64_t> axes;
  if (const Attribute* a = un.attr("axes")) axes = a->ints;  // opset < 13
  else if (un.inputs.size() == 2) {
    auto it = g.initializers.find(un.inputs[1]);
    if (it == g.initializers.end() || it->second.dtype() != DataType::kInt64) return -1;
    axes.assign(it->second.data<int64_t>(), it->second.data<int64_t>() + it->second.numel());
  }
  if (axes != std::vector<int64_t>{0}) return -1;
  const int ga = index.producer(un.inputs[0]);
  if (ga < 0 || !is_onnx(g.nodes[ga], "Gather") || g.nodes[ga].inputs.size() != 2) return -1;
  const Attribute* axis = g.nodes[ga].attr("axis");
  if (axis && axis->i != 0) return -1;
  auto it = g.initializers.find(g.nodes[ga].inputs[1]);
  if (it == g.initializers.end() || it->second.dtype() != DataType::kInt64 || it->second.numel() != 1) return -1;
  const int sh = index.producer(g.nodes[ga].inputs[0]);
  if (sh < 0 || !is_onnx(g.nodes[sh], "Shape") || g.nodes[sh].inputs[0] != src || g.nodes[sh].attr("start") ||
      g.nodes[sh].attr("end"))
    return -1;
  return it->second.data<int64_t>()[0];
}

// The Reshape target as [B, S, H, D] with positive H and D, where B and S are positive
// constants or 0 = "the input's dim" (Reshape's own meaning of 0): a constant int64 [4],
// or torch's Concat(size(0), size(1), H, D) of the Reshape's input.
bool reshape_target(const Graph& g, const GraphIndex& index, const Node& reshape, std::vector<int64_t>* dims) {
  if (!is_onnx(reshape, "Reshape") || reshape.inputs.size() != 2) return false;
  if (const Attribute* az = reshape.attr("allowzero"); az && az->i != 0) return false;
  auto it = g.initializers.find(reshape.inputs[1]);
  if (it != g.initializers.end()) {
    if (it->second.dtype() != DataType::kInt64 || it->second.numel() != 4) return false;
    dims->assign(it->second.data<int64_t>(), it->second.data<int64_t>() + 4);
  } else {
    const int c = index.producer(reshape.inputs[1]);
    if (c < 0 || !is_onnx(g.nodes[c], "Concat") || g.nodes[c].inputs.size() != 4) return false;
    const Node& cat = g.nodes[c];
    dims->assign(4, 0);
    for (int i = 0; i < 2; ++i)
      if (dim_of(g, index, cat.inputs[i], reshape.inputs[0]) != i) return false;
    for (int i = 2; i < 4; ++i) {
      auto ci = g.initializers.find(cat.inputs[i]);
      if (ci == g.initializers.end() || ci->second.dtype() != DataType::kInt64 || ci->second.numel() != 1) return false;
      (*dims)[i] = ci->second.data<int64_t>()[0];
    }
  }
  return (*dims)[0] >= 0 && (*dims)[1] >= 0 && (*dims)[2] > 0 && (*dims)[3] > 0;
}

struct Branch {
  int transpose = -1, reshape = -1;
  std::string source;  // the projection output read by the fused node
  std::vector<int64_t> dims;
};

// value <- Transpose(perm) <- Reshape(source, [B, S, H, D]), both single-use.
bool match_branch(const Graph& g, const GraphIndex& index, const std::string& value,
                  std::initializer_list<int64_t> perm, Branch* b) {
  b->transpose = index.producer(value);
  if (b->transpose < 0 || !index.single_use(value) || !has_perm(g.nodes[b->transpose], perm)) return false;
  const std::string& reshaped = g.nodes[b->transpose].inputs[0];
  b->reshape = index.producer(reshaped);
  if (b->reshape < 0 || !index.single_use(reshaped) || !reshape_target(g, index, g.nodes[b->reshape], &b->dims)) return false;
  b->source = g.nodes[b->reshape].inputs[0];
  return true;
}

Attribute ints_attr(const char* name, const std::vector<int64_t>& v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = v;
  return a;
}

}  // namespace

Status attention_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t s = 0; s < graph.nodes.size(); ++s) {
    AttentionCore core;
    if (!match_attention_core(graph, index, s, &core)) continue;
    const Node& sm = graph.nodes[s];
    const int qk = core.qk, pv = core.pv;
    const int out = index.sole_consumer(graph.nodes[pv].outputs[0], pv);
    if (out < 0 || !has_perm(graph.nodes[out], {0, 2, 1, 3})) continue;
    Branch q, k, v;
    if (!match_branch(graph, index, graph.nodes[qk].inputs[0], {0, 2, 1, 3}, &q) ||
        !match_branch(graph, index, graph.nodes[qk].inputs[1], {0, 2, 3, 1}, &k) ||
        !match_branch(graph, index, graph.nodes[pv].inputs[1], {0, 2, 1, 3}, &v))
      continue;
    if (q.dims[2] != k.dims[2] || q.dims[3] != k.dims[3] || k.dims[2] != v.dims[2] || k.dims[3] != v.dims[3]) continue;
    const std::set<int> swallowed{q.transpose, q.reshape, k.transpose, k.reshape, v.transpose,
                                  v.reshape,   qk,        static_cast<int>(s),     pv};
    bool taken = false;
    for (int n : swallowed) taken = taken || dead.count(n);
    if (taken) continue;
    Node fused;
    fused.name = graph.nodes[out].name + "/attention_fused";
    fused.op_type = "MultiHeadAttention";
    fused.domain = kInternalDomain;
    fused.inputs = {q.source, k.source, v.source, sm.inputs[1]};
    fused.outputs = {graph.nodes[out].outputs[0]};
    fused.attributes["q_shape"] = ints_attr("q_shape", q.dims);
    fused.attributes["k_shape"] = ints_attr("k_shape", k.dims);
    fused.attributes["v_shape"] = ints_attr("v_shape", v.dims);
    fused.attributes["scale"] = sm.attributes.count("scale") ? sm.attributes.at("scale") : float_attr("scale", 1.f);
    ctx.log.push_back(pass_name + ": fused Reshape/Transpose x3, MatMul, ScaledMaskedSoftmax, MatMul, Transpose '" +
                      graph.nodes[out].name + "' -> MultiHeadAttention (" + std::to_string(q.dims[2]) + " heads of " +
                      std::to_string(q.dims[3]) + ")");
    dead.insert(swallowed.begin(), swallowed.end());
    graph.nodes[static_cast<size_t>(out)] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
