// Pass qkv_projection_fusion: the three projections feeding one fused self-attention,
//   Q = P(X, Wq, ..., bq)   K = P(X, Wk, ..., bk)   V = P(X, Wv, ..., bv)
//   Y = glassbox::MultiHeadAttention(Q, K, V, mask)
// where P is glassbox::FusedMatMul (fp32 model; no activation, no residual) or
// glassbox::MatMulIntegerToFloat (onnxruntime's dynamic quantization; the three share the
// quantized X, its scale and zero point), every weight, scale, zero point and bias is an
// initializer, each projection has N = heads * head_dim columns and Q, K, V have no other
// reader, becomes
//   QKV = P(X, [Wq | Wk | Wv], ..., [bq | bk | bv])           (N = 3 * heads * head_dim)
//   Y = MultiHeadAttention(QKV, "", "", mask) with packed_qkv = 1
// One GEMM call per layer instead of three (one thread wake-up; with --precision
// int8-dynamic one row quantization of X instead of three), and the attention reads Q, K
// and V in place as column ranges of QKV's rows (no split, no copy). Per-column weight
// scales and zero points are concatenated (a scalar is repeated over its columns); the
// weights are joined only when first read (graph/column_concat.h: with a warm packed-weights
// cache, never). The concatenated initializer's name is derived from the Q weights' name, so the packed-weights
// cache finds it again on the next load. Runs after matmul_epilogue_fusion,
// quantized_matmul_fusion and attention_fusion (it rewrites their nodes) and after
// dead_node_elimination: before it, the Shape nodes torch's Reshape targets were built from
// still read Q, K and V (the unused initializers it replaces it drops itself).
#include <algorithm>
#include <cstring>

#include "graph/column_concat.h"
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

bool is_internal(const Node& n, const char* op) { return n.op_type == op && n.domain == kInternalDomain; }

const Tensor* initializer(const Graph& g, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = g.initializers.find(name);
  return it == g.initializers.end() ? nullptr : &it->second;
}

// Positions of a projection's inputs: A and the per-layer constants, by op.
struct ProjectionForm {
  const char* op;
  std::vector<size_t> shared;   // inputs that must be the same value in all three (A, a_scale, a_zero_point)
  size_t weights;               // [K, N] initializer, concatenated along N
  std::vector<size_t> columns;  // optional per-column ([N] or scalar) initializers, concatenated
};

const ProjectionForm kFusedMatMul{"FusedMatMul", {0}, 1, {2}};
const ProjectionForm kMatMulIntegerToFloat{"MatMulIntegerToFloat", {0, 2, 4}, 1, {3, 5, 6}};

// The projection producing `value` (node index, -1 if none fits the form), its N in *n.
int match_projection(const Graph& g, const GraphIndex& index, const std::string& value, const ProjectionForm& form,
                     int64_t* n) {
  const int p = index.producer(value);
  if (p < 0 || !index.single_use(value)) return -1;
  const Node& node = g.nodes[static_cast<size_t>(p)];
  if (!is_internal(node, form.op) || node.outputs.size() != 1) return -1;
  if (&form == &kFusedMatMul && (node.inputs.size() != 3 || node.attr("activation"))) return -1;
  if (&form == &kMatMulIntegerToFloat && (node.inputs.size() < 4 || node.inputs.size() > 7)) return -1;
  const Tensor* w = initializer(g, node.inputs[form.weights]);
  if (!w || w->rank() != 2 || w->shape()[1] <= 0) return -1;
  *n = w->shape()[1];
  for (size_t c : form.columns) {
    if (c >= node.inputs.size() || node.inputs[c].empty()) continue;
    const Tensor* t = initializer(g, node.inputs[c]);
    if (!t || !(t->numel() == 1 || (t->rank() == 1 && t->numel() == *n))) return -1;
  }
  return p;
}

std::string input_or_empty(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); }

// The three projections agree on everything but their constants' values.
bool compatible(const Graph& g, const Node* p[3], const ProjectionForm& form) {
  for (int i = 1; i < 3; ++i) {
    for (size_t s : form.shared)
      if (input_or_empty(*p[i], s) != input_or_empty(*p[0], s)) return false;
    const Tensor* w0 = initializer(g, p[0]->inputs[form.weights]);
    const Tensor* wi = initializer(g, p[i]->inputs[form.weights]);
    if (wi->dtype() != w0->dtype() || wi->shape()[0] != w0->shape()[0]) return false;
    for (size_t c : form.columns) {
      const Tensor* t0 = initializer(g, input_or_empty(*p[0], c));
      const Tensor* ti = initializer(g, input_or_empty(*p[i], c));
      if (!t0 != !ti || (t0 && t0->dtype() != ti->dtype())) return false;
    }
  }
  return true;
}

// [n0 + n1 + n2] from three per-column vectors [ni] (a scalar is repeated over its ni columns).
Result<Tensor> concat_vectors(const Tensor* parts[3], const int64_t n[3]) {
  GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(parts[0]->dtype(), Shape{n[0] + n[1] + n[2]}));
  const size_t es = dtype_size(parts[0]->dtype());
  char* dst = static_cast<char*>(out.mutable_raw());
  for (int i = 0; i < 3; ++i) {
    const char* src = static_cast<const char*>(parts[i]->raw());
    if (parts[i]->numel() == 1)
      for (int64_t j = 0; j < n[i]; ++j, dst += es) std::memcpy(dst, src, es);
    else
      for (int64_t j = 0; j < n[i]; ++j, dst += es) std::memcpy(dst, src + static_cast<size_t>(j) * es, es);
  }
  return out;
}

// A name no value of the graph uses yet, stable across loads of the same model.
std::string fresh_name(const Graph& g, const std::set<std::string>& used, const std::string& base) {
  std::string name = base;
  for (int i = 2; used.count(name) || g.initializers.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

Status add_initializer(Graph& g, std::set<std::string>& used, const std::string& base, Tensor t, std::string* name) {
  *name = fresh_name(g, used, base);
  used.insert(*name);
  set_initializer(g, *name, std::move(t));
  return {};
}

// Builds the fused projection node from the three (their inputs concatenated).
Result<Node> fused_projection(Graph& g, std::set<std::string>& used, const Node* p[3], const ProjectionForm& form,
                              const int64_t n[3]) {
  Node fused = *p[0];
  fused.name = p[0]->name + "/qkv_fused";
  fused.outputs = {fresh_name(g, used, p[0]->outputs[0] + "/qkv")};
  used.insert(fused.outputs[0]);
  std::vector<size_t> concat{form.weights};
  concat.insert(concat.end(), form.columns.begin(), form.columns.end());
  for (size_t c : concat) {
    if (input_or_empty(*p[0], c).empty()) continue;
    const Tensor* parts[3];
    for (int i = 0; i < 3; ++i) parts[i] = initializer(g, p[i]->inputs[c]);
    Tensor t;
    if (c == form.weights) {  // joined when first packed or read (column_concat.h), not here
      GB_ASSIGN_OR_RETURN(t, concat_columns_lazily({*parts[0], *parts[1], *parts[2]}));
    } else {
      GB_ASSIGN_OR_RETURN(t, concat_vectors(parts, n));
    }
    GB_RETURN_IF_ERROR(add_initializer(g, used, p[0]->inputs[c] + "/qkv", std::move(t), &fused.inputs[c]));
  }
  return fused;
}

Attribute int_attr(const char* name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

// Removes the initializers in `names` that no node, subgraph or graph output reads any more
// (the pass runs after dead_node_elimination, which would otherwise drop them).
void drop_unread(Graph& g, const std::set<std::string>& names) {
  std::set<std::string> read;
  for (const auto& n : g.nodes) collect_used_names(n, read);
  for (const auto& o : g.outputs) read.insert(o.name);
  for (const auto& name : names)
    if (!read.count(name)) {
      g.initializers.erase(name);
      g.initializer_info.erase(name);
    }
}

}  // namespace

Status qkv_projection_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<std::string> used;
  for (const auto& n : graph.nodes) {
    collect_used_names(n, used);
    used.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const auto& o : graph.outputs) used.insert(o.name);
  for (const auto& i : graph.inputs) used.insert(i.name);
  std::set<int> dead;
  std::set<std::string> replaced;  // initializers of the fused projections
  for (size_t m = 0; m < graph.nodes.size(); ++m) {
    const Node& mha = graph.nodes[m];
    if (!is_internal(mha, "MultiHeadAttention") || mha.inputs.size() < 3 || mha.attr("packed_qkv")) continue;
    const Attribute* qs = mha.attr("q_shape");
    if (!qs || qs->ints.size() != 4) continue;
    const int64_t hd = qs->ints[2] * qs->ints[3];
    for (const ProjectionForm* form : {&kFusedMatMul, &kMatMulIntegerToFloat}) {
      int idx[3];
      int64_t n[3];
      const Node* p[3];
      bool ok = true;
      for (int i = 0; i < 3 && ok; ++i) {
        idx[i] = match_projection(graph, index, mha.inputs[static_cast<size_t>(i)], *form, &n[i]);
        ok = idx[i] >= 0 && n[i] == hd && !dead.count(idx[i]);
        if (ok) p[i] = &graph.nodes[static_cast<size_t>(idx[i])];
      }
      if (!ok || idx[0] == idx[1] || idx[1] == idx[2] || idx[0] == idx[2] || !compatible(graph, p, *form)) continue;
      GB_ASSIGN_OR_RETURN(Node fused, fused_projection(graph, used, p, *form, n));
      ctx.log.push_back(pass_name + ": fused " + form->op + " '" + p[0]->name + "', '" + p[1]->name + "', '" +
                        p[2]->name + "' -> one " + form->op + " of " + std::to_string(3 * hd) +
                        " columns read in place by MultiHeadAttention '" + mha.name + "'");
      Node& attn = graph.nodes[m];
      attn.inputs[0] = fused.outputs[0];
      attn.inputs[1].clear();
      attn.inputs[2].clear();
      attn.attributes["packed_qkv"] = int_attr("packed_qkv", 1);
      // The fused projection takes the place of the earliest of the three (X is ready there).
      for (const Node* n : p)
        for (size_t c = 1; c < n->inputs.size(); ++c)
          if (graph.initializers.count(n->inputs[c])) replaced.insert(n->inputs[c]);
      const int first = std::min({idx[0], idx[1], idx[2]});
      for (int i : idx)
        if (i != first) dead.insert(i);
      graph.nodes[static_cast<size_t>(first)] = std::move(fused);
      break;
    }
  }
  erase_nodes(graph, dead);
  drop_unread(graph, replaced);
  return {};
}

}  // namespace glassbox::graph::passes
