// TreeEnsemble (ai.onnx.ml 5): X [N, F] (or [F]) float or double -> Y [N, n_targets] of X's type.
// Every nodes_* array has one entry per node; a node's children are node indices, or leaf
// indices into leaf_targetids/leaf_weights when nodes_trueleafs/nodes_falseleafs is 1 (one
// weight per leaf). tree_roots[t] is tree t's root; a root whose two children are the same
// leaf is a one-leaf tree. nodes_modes (uint8 tensor): 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ,
// 6 MEMBER (x equals one value of the node's set; membership_values holds the sets, each ended
// by a NaN, for the MEMBER nodes in node-index order, as onnxruntime reads them).
// aggregate_function 0 AVERAGE, 1 SUM (default), 2 MIN, 3 MAX (a target no leaf reached is 0);
// post_transform 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO (two or more targets; one target
// takes NONE only, as for TreeEnsembleRegressor), 4 PROBIT refused.
//
// The ONNX library glassbox links (1.12) has no schema for this op, so onnx's checker and shape
// inference skip it (graph/loader.cpp) and this file does both jobs: every attribute is checked
// here at load (lengths, ids and leaf flags in range, known modes, well-formed sets, each node in
// one tree and reached once: no cycles), X's type and width at run time, and Y's shape is
// computed here ([N, n_targets], X's type). The trees run on the same kernel as
// TreeEnsembleRegressor (kernels/trees/forest.h), with double thresholds for double X.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "ops/ml/tree_ensemble_common.h"

namespace glassbox::ops {
namespace {

using kernels::trees::Aggregate;
using kernels::trees::ForestSpec;
using kernels::trees::NodeMode;
using kernels::trees::TreeNode;

constexpr int64_t kModeMember = 6;

// A float or double tensor attribute as doubles; `type` receives its dtype (kUndefined when absent).
Result<std::vector<double>> attr_real_tensor(const graph::Node& node, const std::string& name, DataType& type) {
  type = DataType::kUndefined;
  const graph::Attribute* a = node.attr(name);
  if (!a) return std::vector<double>{};
  if (a->type != graph::AttrType::kTensor) return attr_type_error(*a, graph::AttrType::kTensor);
  const Tensor& t = a->t;
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kFloat32) {
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data<float>()[i];
  } else if (t.dtype() == DataType::kFloat64) {
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data<double>()[i];
  } else {
    return ml::bad_attr(name + " must be a float or double tensor, got " + dtype_name(t.dtype()));
  }
  type = t.dtype();
  return v;
}

Result<std::vector<int64_t>> attr_modes(const graph::Node& node) {
  const graph::Attribute* a = node.attr("nodes_modes");
  if (!a) return ml::bad_attr("nodes_modes is missing (a uint8 tensor, one mode per node)");
  if (a->type != graph::AttrType::kTensor) return attr_type_error(*a, graph::AttrType::kTensor);
  if (a->t.dtype() != DataType::kUInt8)
    return ml::bad_attr(std::string("nodes_modes must be a uint8 tensor, got ") + dtype_name(a->t.dtype()));
  std::vector<int64_t> v(static_cast<size_t>(a->t.numel()));
  for (int64_t i = 0; i < a->t.numel(); ++i) v[i] = a->t.data<uint8_t>()[i];
  return v;
}

Status check_len(const char* name, size_t got, size_t want, const char* of) {
  if (got == want) return {};
  return ml::bad_attr(std::string(name) + " has " + std::to_string(got) + " entries, " + of + " has " +
                      std::to_string(want) + " (one entry per index; the arrays must have equal lengths)");
}

Status check_flags(const char* name, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0 && v[i] != 1) return ml::bad_attr(std::string(name) + "[" + std::to_string(i) + "] must be 0 or 1, got " + std::to_string(v[i]));
  return {};
}

struct V5Arrays {
  std::vector<int64_t> features, modes, true_ids, false_ids, true_leaf, false_leaf, missing, roots, leaf_targets;
  std::vector<double> splits, hitrates, leaf_weights, members;
  DataType type = DataType::kUndefined;  // of nodes_splits; the other real tensors must match it
};

Result<V5Arrays> read_arrays(const graph::Node& node) {
  V5Arrays a;
  GB_ASSIGN_OR_RETURN(a.features, ml::attr_ints_or_empty(node, "nodes_featureids"));
  GB_ASSIGN_OR_RETURN(a.modes, attr_modes(node));
  GB_ASSIGN_OR_RETURN(a.true_ids, ml::attr_ints_or_empty(node, "nodes_truenodeids"));
  GB_ASSIGN_OR_RETURN(a.false_ids, ml::attr_ints_or_empty(node, "nodes_falsenodeids"));
  GB_ASSIGN_OR_RETURN(a.true_leaf, ml::attr_ints_or_empty(node, "nodes_trueleafs"));
  GB_ASSIGN_OR_RETURN(a.false_leaf, ml::attr_ints_or_empty(node, "nodes_falseleafs"));
  GB_ASSIGN_OR_RETURN(a.missing, ml::attr_ints_or_empty(node, "nodes_missing_value_tracks_true"));
  GB_ASSIGN_OR_RETURN(a.roots, ml::attr_ints_or_empty(node, "tree_roots"));
  GB_ASSIGN_OR_RETURN(a.leaf_targets, ml::attr_ints_or_empty(node, "leaf_targetids"));
  GB_ASSIGN_OR_RETURN(a.splits, attr_real_tensor(node, "nodes_splits", a.type));
  if (a.type == DataType::kUndefined) return ml::bad_attr("nodes_splits is missing (a float or double tensor)");
  DataType hit_type;  // only orders the layout: float or double whatever X is
  GB_ASSIGN_OR_RETURN(a.hitrates, attr_real_tensor(node, "nodes_hitrates", hit_type));
  for (auto [name, out] : {std::pair{"leaf_weights", &a.leaf_weights}, std::pair{"membership_values", &a.members}}) {
    DataType t;
    GB_ASSIGN_OR_RETURN(*out, attr_real_tensor(node, name, t));
    if (t != DataType::kUndefined && t != a.type)
      return ml::bad_attr(std::string(name) + " is " + dtype_name(t) + " but nodes_splits is " + dtype_name(a.type) +
                          " (the real-valued attributes share X's type)");
  }
  const size_t n = a.modes.size();
  if (n == 0) return ml::bad_attr("nodes_modes is empty: the ensemble has no nodes");
  if (n > (size_t{1} << 30)) return ml::bad_attr("more than 2^30 nodes");
  GB_RETURN_IF_ERROR(check_len("nodes_featureids", a.features.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("nodes_splits", a.splits.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("nodes_truenodeids", a.true_ids.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("nodes_falsenodeids", a.false_ids.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("nodes_trueleafs", a.true_leaf.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("nodes_falseleafs", a.false_leaf.size(), n, "nodes_modes"));
  if (!a.missing.empty()) GB_RETURN_IF_ERROR(check_len("nodes_missing_value_tracks_true", a.missing.size(), n, "nodes_modes"));
  if (!a.hitrates.empty()) GB_RETURN_IF_ERROR(check_len("nodes_hitrates", a.hitrates.size(), n, "nodes_modes"));
  GB_RETURN_IF_ERROR(check_len("leaf_weights", a.leaf_weights.size(), a.leaf_targets.size(), "leaf_targetids"));
  if (a.leaf_targets.empty()) return ml::bad_attr("leaf_targetids is empty: the ensemble has no leaves");
  if (a.roots.empty()) return ml::bad_attr("tree_roots is empty: the ensemble has no trees");
  GB_RETURN_IF_ERROR(check_flags("nodes_trueleafs", a.true_leaf));
  GB_RETURN_IF_ERROR(check_flags("nodes_falseleafs", a.false_leaf));
  GB_RETURN_IF_ERROR(check_flags("nodes_missing_value_tracks_true", a.missing));
  return a;
}

// Per node: its set index into spec.member_sets (MEMBER nodes), read from the NaN-separated list.
Result<std::vector<int32_t>> split_member_sets(const V5Arrays& a, ForestSpec& spec) {
  std::vector<int32_t> set_of(a.modes.size(), -1);
  size_t pos = 0;
  for (size_t i = 0; i < a.modes.size(); ++i) {
    if (a.modes[i] != kModeMember) continue;
    std::vector<double> set;
    while (pos < a.members.size() && !std::isnan(a.members[pos])) set.push_back(a.members[pos++]);
    if (pos == a.members.size())
      return ml::bad_attr("membership_values: node " + std::to_string(i) +
                          " is BRANCH_MEMBER but its set is missing or not ended by a NaN (one NaN-terminated set "
                          "per BRANCH_MEMBER node, in node order)");
    ++pos;  // the NaN
    if (set.empty()) return ml::bad_attr("membership_values: the set of node " + std::to_string(i) + " is empty");
    set_of[i] = static_cast<int32_t>(spec.member_sets.size());
    spec.member_sets.push_back(std::move(set));
  }
  if (pos != a.members.size())
    return ml::bad_attr("membership_values has " + std::to_string(a.members.size() - pos) +
                        " values after the last BRANCH_MEMBER node's set (more sets than BRANCH_MEMBER nodes)");
  if (spec.member_sets.size() >= (size_t{1} << 24)) return ml::bad_attr("more than 2^24 BRANCH_MEMBER nodes");
  return set_of;
}

Status check_node(const V5Arrays& a, size_t i, int64_t n_leaves) {
  const std::string at = "node " + std::to_string(i);
  if (a.modes[i] < 0 || a.modes[i] > kModeMember)
    return ml::bad_attr(at + ": nodes_modes = " + std::to_string(a.modes[i]) +
                        " is not a mode (0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER)");
  if (a.features[i] < 0 || a.features[i] > std::numeric_limits<int32_t>::max() / 2)
    return ml::bad_attr(at + ": feature id " + std::to_string(a.features[i]) + " is out of range");
  if (a.modes[i] != kModeMember && std::isnan(a.splits[i])) return ml::bad_attr(at + ": nodes_splits is NaN");
  const int64_t n_nodes = static_cast<int64_t>(a.modes.size());
  for (int side = 0; side < 2; ++side) {
    const int64_t c = side ? a.false_ids[i] : a.true_ids[i];
    const bool leaf = (side ? a.false_leaf[i] : a.true_leaf[i]) != 0;
    const int64_t limit = leaf ? n_leaves : n_nodes;
    if (c < 0 || c >= limit)
      return ml::bad_attr(at + ": " + (side ? "false" : "true") + " child " + std::to_string(c) + " is out of range (" +
                          (leaf ? "leaf ids are 0.." : "node ids are 0..") + std::to_string(limit - 1) + ")");
  }
  return {};
}

// Builds one tree (local index 0 = root) by walking from its root; a node reached twice (a cycle,
// a shared subtree, or a node of another tree) is refused.
Status add_tree(const V5Arrays& a, const std::vector<int32_t>& set_of, size_t t, std::vector<int32_t>& owner,
                ForestSpec& spec) {
  const int64_t root = a.roots[t];
  const std::string where = "tree " + std::to_string(t) + " (root " + std::to_string(root) + ")";
  if (root < 0 || root >= static_cast<int64_t>(a.modes.size()))
    return ml::bad_attr(where + ": tree_roots[" + std::to_string(t) + "] is not a node index");
  std::vector<TreeNode> tree(1);
  if (a.true_leaf[root] && a.false_leaf[root] && a.true_ids[root] == a.false_ids[root]) {  // a one-leaf tree
    tree[0].leaf = static_cast<int32_t>(a.true_ids[root]);
    spec.trees.push_back(std::move(tree));
    return {};
  }
  std::vector<std::pair<int64_t, int32_t>> stack{{root, 0}};  // (node index, local slot)
  while (!stack.empty()) {
    auto [i, slot] = stack.back();
    stack.pop_back();
    if (owner[i] >= 0)
      return ml::bad_attr(where + ": node " + std::to_string(i) + " is reached twice (from tree " + std::to_string(owner[i]) +
                          "): a cycle, a shared subtree or two trees sharing a node; each node belongs to one tree once");
    owner[i] = static_cast<int32_t>(t);
    TreeNode& tn = tree[slot];
    tn.mode = a.modes[i] == kModeMember ? NodeMode::kMember : static_cast<NodeMode>(a.modes[i]);
    tn.feature = static_cast<int32_t>(a.features[i]);
    tn.threshold = a.splits[i];
    tn.member_set = set_of[i];
    tn.missing_true = !a.missing.empty() && a.missing[i] == 1;
    if (!a.hitrates.empty()) tn.hitrate = a.hitrates[i];
    int32_t children[2];
    for (int side = 0; side < 2; ++side) {
      const int64_t c = side ? a.false_ids[i] : a.true_ids[i];
      children[side] = static_cast<int32_t>(tree.size());
      tree.emplace_back();
      if ((side ? a.false_leaf[i] : a.true_leaf[i]) != 0) tree.back().leaf = static_cast<int32_t>(c);
      else stack.push_back({c, children[side]});
    }
    tree[slot].true_child = children[0];  // `tn` may dangle after emplace_back
    tree[slot].false_child = children[1];
  }
  spec.trees.push_back(std::move(tree));
  return {};
}

struct TreeEnsembleAttrs {
  int64_t n_targets = 0;
  Aggregate aggregate = Aggregate::kSum;
  bool average = false;
  ml::PostTransform post_transform = ml::PostTransform::kNone;
  DataType type = DataType::kFloat32;  // of the thresholds: X must have it
};

Result<ForestSpec> parse_trees(const graph::Node& node, TreeEnsembleAttrs& attrs) {
  GB_ASSIGN_OR_RETURN(V5Arrays a, read_arrays(node));
  attrs.type = a.type;
  ForestSpec spec;
  spec.n_targets = static_cast<int32_t>(attrs.n_targets);
  const int64_t n_leaves = static_cast<int64_t>(a.leaf_targets.size());
  for (size_t l = 0; l < a.leaf_targets.size(); ++l) {
    if (a.leaf_targets[l] < 0 || a.leaf_targets[l] >= attrs.n_targets)
      return ml::bad_attr("leaf " + std::to_string(l) + ": leaf_targetids = " + std::to_string(a.leaf_targets[l]) +
                          " is out of range [0, " + std::to_string(attrs.n_targets) + ")");
    spec.leaf_begin.push_back(static_cast<int32_t>(l));
    spec.weight_target.push_back(static_cast<int32_t>(a.leaf_targets[l]));
    spec.weight_value.push_back(a.leaf_weights[l]);
  }
  spec.leaf_begin.push_back(static_cast<int32_t>(n_leaves));
  for (size_t i = 0; i < a.modes.size(); ++i) GB_RETURN_IF_ERROR(check_node(a, i, n_leaves));
  GB_ASSIGN_OR_RETURN(auto set_of, split_member_sets(a, spec));
  std::vector<int32_t> owner(a.modes.size(), -1);
  for (size_t t = 0; t < a.roots.size(); ++t) GB_RETURN_IF_ERROR(add_tree(a, set_of, t, owner, spec));
  return spec;
}

template <typename T>
void transform_row(ml::PostTransform p, T* s, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    ml::transform_row(p, s, n);
  } else {
    if (p == ml::PostTransform::kLogistic)
      for (int64_t i = 0; i < n; ++i) s[i] = 1.0 / (1.0 + std::exp(-s[i]));
    if (p != ml::PostTransform::kSoftmax && p != ml::PostTransform::kSoftmaxZero) return;
    double m = -std::numeric_limits<double>::max(), sum = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, s[i]);
    for (int64_t i = 0; i < n; ++i) {
      const bool zero = p == ml::PostTransform::kSoftmaxZero && std::fabs(s[i]) <= 1e-7;
      s[i] = zero ? s[i] * std::exp(-m) : std::exp(s[i] - m);
      sum += s[i];
    }
    for (int64_t i = 0; i < n; ++i) s[i] /= sum;
  }
}

class TreeEnsembleOp final : public Op {
 public:
  TreeEnsembleOp(TreeEnsembleAttrs a, const ForestSpec& spec) : a_(a) {
    if (a.type == DataType::kFloat64) f64_.emplace(spec);
    else f32_.emplace(spec);
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->rank() != 1 && x->rank() != 2)
      return op_error(ctx, ErrorCode::kInvalidArgument, "X must have rank 1 or 2, got " + shape_to_string(x->shape()));
    if (x->dtype() != a_.type)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("X is ") + dtype_name(x->dtype()) + " but the model's thresholds (nodes_splits) are " +
                          dtype_name(a_.type) + "; TreeEnsemble computes in X's type, which must be the attributes' type");
    const int64_t rows = x->rank() == 2 ? x->shape()[0] : 1, cols = x->shape().back();
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a_.type, {rows, a_.n_targets}));
    if (f64_) return finish(ctx, *f64_, x->data<double>(), rows, cols, y->mutable_data<double>());
    return finish(ctx, *f32_, x->data<float>(), rows, cols, y->mutable_data<float>());
  }

  std::string load_decision() const override {
    return "tree layout: " + (f64_ ? f64_->forest().describe() + " (double thresholds)" : f32_->forest().describe());
  }

 private:
  template <typename T>
  Status finish(ComputeContext& ctx, const ml::BasicForestRunner<T>& runner, const T* x, int64_t rows, int64_t cols,
                T* y) const {
    std::vector<double> scores;
    GB_RETURN_IF_ERROR(runner.run(ctx, x, rows, cols, a_.aggregate, scores));
    const int64_t k = a_.n_targets;
    const double trees = static_cast<double>(runner.forest().num_trees());
    for (int64_t r = 0; r < rows; ++r) {
      T* out = y + r * k;
      for (int64_t t = 0; t < k; ++t) {
        double s = scores[r * k + t];
        if (std::isinf(s) && a_.aggregate != Aggregate::kSum) s = 0.0;  // no leaf reached this target
        if (a_.average) s /= trees;
        out[t] = static_cast<T>(s);
      }
      if (k >= 2) transform_row(a_.post_transform, out, k);
    }
    return {};
  }

  TreeEnsembleAttrs a_;
  std::optional<ml::BasicForestRunner<float>> f32_;
  std::optional<ml::BasicForestRunner<double>> f64_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_TreeEnsemble(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(
      node, {"aggregate_function", "leaf_targetids", "leaf_weights", "membership_values", "n_targets",
             "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
             "nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs", "nodes_truenodeids",
             "post_transform", "tree_roots"}));
  TreeEnsembleAttrs a;
  GB_ASSIGN_OR_RETURN(a.n_targets, attr_int_required(node, "n_targets"));
  if (a.n_targets <= 0 || a.n_targets > (int64_t{1} << 24))
    return ml::bad_attr("n_targets is " + std::to_string(a.n_targets) + ", expected 1 .. 2^24");
  GB_ASSIGN_OR_RETURN(int64_t agg, attr_int(node, "aggregate_function", 1));
  switch (agg) {
    case 0: a.average = true; break;
    case 1: break;
    case 2: a.aggregate = Aggregate::kMin; break;
    case 3: a.aggregate = Aggregate::kMax; break;
    default:
      return ml::bad_attr("aggregate_function " + std::to_string(agg) + " is not one of 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX");
  }
  GB_ASSIGN_OR_RETURN(int64_t post, attr_int(node, "post_transform", 0));
  constexpr ml::PostTransform kPost[] = {ml::PostTransform::kNone, ml::PostTransform::kSoftmax, ml::PostTransform::kLogistic,
                                         ml::PostTransform::kSoftmaxZero, ml::PostTransform::kProbit};
  if (post < 0 || post > 4)
    return ml::bad_attr("post_transform " + std::to_string(post) +
                        " is not one of 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT");
  a.post_transform = kPost[post];
  if (a.post_transform == ml::PostTransform::kProbit) return ml::refuse_probit();
  if (a.n_targets == 1 && a.post_transform != ml::PostTransform::kNone)
    return unsupported_attr("post_transform", "with one target only NONE (0) is supported (onnxruntime ignores "
                                              "LOGISTIC/SOFTMAX for one target; the result would be ambiguous)");
  GB_ASSIGN_OR_RETURN(ForestSpec spec, parse_trees(node, a));
  return std::unique_ptr<Op>(new TreeEnsembleOp(a, spec));
}

}  // namespace glassbox::ops
