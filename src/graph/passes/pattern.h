// Helpers for the fusion passes: who produces and who consumes each value, and
// small predicates on nodes and constant initializers. A fusion may swallow a
// value only if nothing else reads it (single_use): not another node, not a
// graph output, not a subgraph capture.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/passes/passes.h"

namespace glassbox::graph::passes {

// Domain of the runtime's internal fused ops (never read from model files as ONNX).
inline constexpr const char* kInternalDomain = "glassbox";

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& o : g.nodes[i].outputs)
        if (!o.empty()) producer_[o] = static_cast<int>(i);
      for (const auto& in : g.nodes[i].inputs)
        if (!in.empty()) uses_[in]++;
    }
    for (const auto& o : g.outputs) uses_[o.name] += 2;  // a graph output is never swallowed
    for (const auto& n : names_used_in_subgraphs(g)) uses_[n] += 2;
  }
  // Index of the node producing `value`, or -1.
  int producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? -1 : it->second;
  }
  bool single_use(const std::string& value) const {
    auto it = uses_.find(value);
    return it != uses_.end() && it->second == 1;
  }
  int uses(const std::string& value) const {
    auto it = uses_.find(value);
    return it == uses_.end() ? 0 : it->second;
  }
  // The only node reading `value` (-1 if none or several), searching after `after`.
  int sole_consumer(const std::string& value, int after) const {
    if (!single_use(value)) return -1;
    for (size_t i = static_cast<size_t>(after + 1); i < g_.nodes.size(); ++i)
      for (const auto& in : g_.nodes[i].inputs)
        if (in == value) return static_cast<int>(i);
    return -1;
  }

 private:
  const Graph& g_;
  std::map<std::string, int> producer_;
  std::map<std::string, int> uses_;
};

inline bool is_onnx(const Node& n, const char* op) {
  return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx");
}

inline bool has_perm(const Node& n, std::initializer_list<int64_t> perm) {
  const Attribute* a = n.attr("perm");
  return is_onnx(n, "Transpose") && a && a->ints == std::vector<int64_t>(perm);
}

// The core of an attention block after attention_softmax_fusion, around the ScaledMaskedSoftmax node
// `softmax`: scores = MatMul(q, k) read only by it, probs read only by MatMul(probs, v). Node indices.
struct AttentionCore {
  int qk = -1, softmax = -1, pv = -1;
};

inline bool match_attention_core(const Graph& g, const GraphIndex& index, size_t softmax, AttentionCore* core) {
  const Node& sm = g.nodes[softmax];
  if (sm.op_type != "ScaledMaskedSoftmax" || sm.domain != kInternalDomain || sm.inputs.size() != 2) return false;
  core->softmax = static_cast<int>(softmax);
  core->qk = index.producer(sm.inputs[0]);
  if (core->qk < 0 || !index.single_use(sm.inputs[0]) || !is_onnx(g.nodes[core->qk], "MatMul")) return false;
  core->pv = index.sole_consumer(sm.outputs[0], core->softmax);
  return core->pv >= 0 && is_onnx(g.nodes[core->pv], "MatMul") && g.nodes[core->pv].inputs[0] == sm.outputs[0];
}

// A float32 initializer with one element (any rank), its value in *v.
inline bool scalar_constant(const Graph& g, const std::string& name, float* v) {
  auto it = g.initializers.find(name);
  if (it == g.initializers.end() || it->second.dtype() != DataType::kFloat32 || it->second.numel() != 1) return false;
  *v = it->second.data<float>()[0];
  return true;
}

// A float32 initializer of shape [n] (n > 0 returned).
inline int64_t vector_constant(const Graph& g, const std::string& name) {
  auto it = g.initializers.find(name);
  if (it == g.initializers.end() || it->second.dtype() != DataType::kFloat32 || it->second.rank() != 1) return 0;
  return it->second.shape()[0];
}

// The input of a binary node that is not `known` ("" if neither or both are).
inline std::string other_input(const Node& n, const std::string& known) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == known && n.inputs[1] != known) return n.inputs[1];
  if (n.inputs[1] == known && n.inputs[0] != known) return n.inputs[0];
  return "";
}

// Removes the nodes whose index is in `dead` (keeps order).
inline void erase_nodes(Graph& g, const std::set<int>& dead) {
  if (dead.empty()) return;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size() - dead.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead.count(static_cast<int>(i))) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

inline Attribute string_attr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kString;
  a.s = v;
  return a;
}

inline Attribute float_attr(const std::string& name, float v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}

}  // namespace glassbox::graph::passes
