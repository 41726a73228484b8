#include "ops/ml/tree_ensemble_common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace glassbox::ops::ml {
namespace {

using kernels::trees::Aggregate;
using kernels::trees::NodeMode;
using kernels::trees::TreeNode;

Result<NodeMode> parse_mode(const std::string& s, size_t i) {
  if (s == "BRANCH_LEQ") return NodeMode::kLeq;
  if (s == "BRANCH_LT") return NodeMode::kLt;
  if (s == "BRANCH_GTE") return NodeMode::kGte;
  if (s == "BRANCH_GT") return NodeMode::kGt;
  if (s == "BRANCH_EQ") return NodeMode::kEq;
  if (s == "BRANCH_NEQ") return NodeMode::kNeq;
  if (s == "LEAF") return NodeMode::kLeaf;
  return bad_attr("nodes_modes[" + std::to_string(i) + "] = '" + s +
                  "' is not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF");
}

Status check_len(const char* name, size_t got, size_t want, const char* of) {
  if (got == want) return {};
  return bad_attr(std::string(name) + " has " + std::to_string(got) + " entries, " + of + " has " + std::to_string(want) +
                  " (the arrays describe one tuple per index and must have equal lengths)");
}

struct NodeArrays {
  std::vector<int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids, missing;
  std::vector<std::string> modes;
  std::vector<float> values, hitrates;
};

Result<NodeArrays> read_node_arrays(const graph::Node& node) {
  NodeArrays a;
  GB_ASSIGN_OR_RETURN(a.tree_ids, attr_ints_or_empty(node, "nodes_treeids"));
  GB_ASSIGN_OR_RETURN(a.node_ids, attr_ints_or_empty(node, "nodes_nodeids"));
  GB_ASSIGN_OR_RETURN(a.feature_ids, attr_ints_or_empty(node, "nodes_featureids"));
  GB_ASSIGN_OR_RETURN(a.true_ids, attr_ints_or_empty(node, "nodes_truenodeids"));
  GB_ASSIGN_OR_RETURN(a.false_ids, attr_ints_or_empty(node, "nodes_falsenodeids"));
  GB_ASSIGN_OR_RETURN(a.missing, attr_ints_or_empty(node, "nodes_missing_value_tracks_true"));
  GB_ASSIGN_OR_RETURN(a.modes, attr_strings(node, "nodes_modes"));
  GB_ASSIGN_OR_RETURN(a.values, attr_floats_or_empty(node, "nodes_values"));
  GB_ASSIGN_OR_RETURN(a.hitrates, attr_floats_or_empty(node, "nodes_hitrates"));
  const size_t n = a.tree_ids.size();
  if (n == 0) return bad_attr("nodes_treeids is empty: the ensemble has no nodes");
  GB_RETURN_IF_ERROR(check_len("nodes_nodeids", a.node_ids.size(), n, "nodes_treeids"));
  GB_RETURN_IF_ERROR(check_len("nodes_modes", a.modes.size(), n, "nodes_treeids"));
  GB_RETURN_IF_ERROR(check_len("nodes_featureids", a.feature_ids.size(), n, "nodes_treeids"));
  GB_RETURN_IF_ERROR(check_len("nodes_values", a.values.size(), n, "nodes_treeids"));
  GB_RETURN_IF_ERROR(check_len("nodes_truenodeids", a.true_ids.size(), n, "nodes_treeids"));
  GB_RETURN_IF_ERROR(check_len("nodes_falsenodeids", a.false_ids.size(), n, "nodes_treeids"));
  if (!a.missing.empty())
    GB_RETURN_IF_ERROR(check_len("nodes_missing_value_tracks_true", a.missing.size(), n, "nodes_treeids"));
  if (!a.hitrates.empty()) GB_RETURN_IF_ERROR(check_len("nodes_hitrates", a.hitrates.size(), n, "nodes_treeids"));
  return a;
}

// Tree structure: every branch's children exist, no node has two parents, the root none.
Status check_tree_shape(const std::vector<TreeNode>& tree, int64_t tree_id) {
  std::vector<int32_t> parent(tree.size(), -1);
  for (size_t n = 0; n < tree.size(); ++n) {
    if (tree[n].mode == NodeMode::kLeaf) continue;
    for (int32_t c : {tree[n].true_child, tree[n].false_child}) {
      const std::string where = "tree " + std::to_string(tree_id) + ", node " + std::to_string(n);
      if (c == 0 || c == static_cast<int32_t>(n))
        return bad_attr(where + ": child " + std::to_string(c) + " is the root or the node itself (a cycle)");
      if (parent[c] >= 0 && parent[c] != static_cast<int32_t>(n))
        return bad_attr(where + ": child " + std::to_string(c) + " already has parent " + std::to_string(parent[c]) +
                        " (not a tree; a cycle or shared subtree)");
      if (parent[c] == static_cast<int32_t>(n) && tree[n].true_child == tree[n].false_child)
        return bad_attr(where + ": true and false child are both " + std::to_string(c));
      parent[c] = static_cast<int32_t>(n);
    }
  }
  return {};
}

}  // namespace

Result<ParsedForest> parse_forest(const graph::Node& node, const std::string& prefix, int64_t n_targets,
                                  bool same_classes_per_tree) {
  GB_RETURN_IF_ERROR(refuse_present(node, {"nodes_values_as_tensor", "nodes_hitrates_as_tensor"},
                                    "double-precision thresholds are not supported; export float thresholds"));
  GB_ASSIGN_OR_RETURN(NodeArrays a, read_node_arrays(node));
  if (n_targets <= 0 || n_targets > (int64_t{1} << 24))
    return bad_attr("the number of targets/classes is " + std::to_string(n_targets) + ", expected 1 .. 2^24");
  const size_t n = a.tree_ids.size();
  ParsedForest pf;
  auto& spec = pf.spec;
  spec.n_targets = static_cast<int32_t>(n_targets);

  // Trees in order of first appearance; node i of the attributes -> (tree, local id).
  std::map<int64_t, size_t> tree_index;
  std::vector<int64_t> tree_id_of;
  for (int64_t t : a.tree_ids)
    if (tree_index.emplace(t, tree_index.size()).second) tree_id_of.push_back(t);
  std::vector<int64_t> tree_size(tree_index.size(), 0);
  for (int64_t t : a.tree_ids) ++tree_size[tree_index[t]];
  spec.trees.resize(tree_index.size());
  for (size_t t = 0; t < spec.trees.size(); ++t) spec.trees[t].resize(static_cast<size_t>(tree_size[t]));
  std::vector<std::vector<bool>> seen(spec.trees.size());
  for (size_t t = 0; t < spec.trees.size(); ++t) seen[t].assign(spec.trees[t].size(), false);

  for (size_t i = 0; i < n; ++i) {
    const size_t t = tree_index[a.tree_ids[i]];
    const int64_t k = tree_size[t];
    const std::string at = "node " + std::to_string(i) + " (tree " + std::to_string(a.tree_ids[i]) + ", id " +
                           std::to_string(a.node_ids[i]) + ")";
    if (a.node_ids[i] < 0 || a.node_ids[i] >= k)
      return bad_attr(at + ": node id out of range; tree " + std::to_string(a.tree_ids[i]) + " has " + std::to_string(k) +
                      " nodes, so its ids must be 0.." + std::to_string(k - 1));
    if (seen[t][a.node_ids[i]]) return bad_attr(at + ": node id appears twice in its tree");
    seen[t][a.node_ids[i]] = true;
    TreeNode& tn = spec.trees[t][a.node_ids[i]];
    GB_ASSIGN_OR_RETURN(tn.mode, parse_mode(a.modes[i], i));
    if (!a.missing.empty() && a.missing[i] != 0 && a.missing[i] != 1)
      return bad_attr(at + ": nodes_missing_value_tracks_true must be 0 or 1, got " + std::to_string(a.missing[i]));
    tn.missing_true = !a.missing.empty() && a.missing[i] == 1;
    if (!a.hitrates.empty()) tn.hitrate = a.hitrates[i];
    if (tn.mode == NodeMode::kLeaf) continue;
    if (a.feature_ids[i] < 0 || a.feature_ids[i] > std::numeric_limits<int32_t>::max() / 2)
      return bad_attr(at + ": feature id " + std::to_string(a.feature_ids[i]) + " is out of range");
    if (std::isnan(a.values[i])) return bad_attr(at + ": threshold (nodes_values) is NaN");
    for (int64_t c : {a.true_ids[i], a.false_ids[i]})
      if (c < 0 || c >= k)
        return bad_attr(at + ": child id " + std::to_string(c) + " is out of range (tree has ids 0.." +
                        std::to_string(k - 1) + ")");
    tn.feature = static_cast<int32_t>(a.feature_ids[i]);
    tn.threshold = a.values[i];
    tn.true_child = static_cast<int32_t>(a.true_ids[i]);
    tn.false_child = static_cast<int32_t>(a.false_ids[i]);
  }
  for (size_t t = 0; t < spec.trees.size(); ++t) GB_RETURN_IF_ERROR(check_tree_shape(spec.trees[t], tree_id_of[t]));

  // Leaf weights, grouped per leaf in attribute order.
  GB_ASSIGN_OR_RETURN(auto w_trees, attr_ints_or_empty(node, prefix + "_treeids"));
  GB_ASSIGN_OR_RETURN(auto w_nodes, attr_ints_or_empty(node, prefix + "_nodeids"));
  GB_ASSIGN_OR_RETURN(auto w_ids, attr_ints_or_empty(node, prefix + "_ids"));
  GB_ASSIGN_OR_RETURN(auto w_values, attr_floats_or_empty(node, prefix + "_weights"));
  const std::string tn_ = prefix + "_treeids";
  GB_RETURN_IF_ERROR(check_len((prefix + "_nodeids").c_str(), w_nodes.size(), w_trees.size(), tn_.c_str()));
  GB_RETURN_IF_ERROR(check_len((prefix + "_ids").c_str(), w_ids.size(), w_trees.size(), tn_.c_str()));
  GB_RETURN_IF_ERROR(check_len((prefix + "_weights").c_str(), w_values.size(), w_trees.size(), tn_.c_str()));
  std::vector<std::vector<int32_t>> leaf_of(spec.trees.size());
  int32_t leaves = 0;
  for (size_t t = 0; t < spec.trees.size(); ++t)
    for (auto& tn : spec.trees[t])
      if (tn.mode == NodeMode::kLeaf) tn.leaf = leaves++;
  std::vector<std::vector<std::pair<int32_t, float>>> per_leaf(static_cast<size_t>(leaves));
  for (size_t j = 0; j < w_trees.size(); ++j) {
    const std::string at = prefix + " weight " + std::to_string(j) + " (tree " + std::to_string(w_trees[j]) + ", node " +
                           std::to_string(w_nodes[j]) + ")";
    auto it = tree_index.find(w_trees[j]);
    if (it == tree_index.end()) return bad_attr(at + ": no such tree in nodes_treeids");
    const auto& tree = spec.trees[it->second];
    if (w_nodes[j] < 0 || w_nodes[j] >= static_cast<int64_t>(tree.size())) return bad_attr(at + ": no such node");
    if (tree[w_nodes[j]].mode != NodeMode::kLeaf) return bad_attr(at + ": the node is a branch, weights belong on LEAF nodes");
    if (w_ids[j] < 0 || w_ids[j] >= n_targets)
      return bad_attr(at + ": " + prefix + " id " + std::to_string(w_ids[j]) + " is out of range [0, " +
                      std::to_string(n_targets) + ")");
    per_leaf[tree[w_nodes[j]].leaf].push_back({static_cast<int32_t>(w_ids[j]), w_values[j]});
  }
  pf.target_has_weights.assign(static_cast<size_t>(n_targets), false);
  for (size_t t = 0; t < spec.trees.size(); ++t) {
    std::set<int32_t> first;
    bool have_first = false;
    for (const auto& tn : spec.trees[t]) {
      if (tn.mode != NodeMode::kLeaf) continue;
      std::set<int32_t> classes;
      for (const auto& [c, v] : per_leaf[tn.leaf]) classes.insert(c);
      if (same_classes_per_tree && have_first && classes != first)
        return bad_attr("tree " + std::to_string(tree_id_of[t]) +
                            ": its leaves carry weights for different class sets; glassbox needs one class set per tree "
                            "(which classes 'have a score' would depend on the row)",
                        "give every leaf of a tree a weight (0 allowed) for the same classes");
      first = classes;
      have_first = true;
    }
  }
  for (const auto& leaf : per_leaf) {
    spec.leaf_begin.push_back(static_cast<int32_t>(spec.weight_target.size()));
    for (const auto& [c, v] : leaf) {
      spec.weight_target.push_back(c);
      spec.weight_value.push_back(v);
      pf.target_has_weights[c] = true;
    }
  }
  spec.leaf_begin.push_back(static_cast<int32_t>(spec.weight_target.size()));
  return pf;
}

template <typename T>
Status BasicForestRunner<T>::run(ComputeContext& ctx, const T* data, int64_t rows, int64_t cols, Aggregate agg,
                                 std::vector<double>& scores) const {
  if (cols <= forest_.max_feature() || cols == 0)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    "X has " + std::to_string(cols) + " columns, the trees read feature " +
                        std::to_string(std::max(0, forest_.max_feature())));
  const int64_t k = forest_.n_targets();
  const double init = agg == Aggregate::kSum   ? 0.0
                      : agg == Aggregate::kMin ? std::numeric_limits<double>::infinity()
                                               : -std::numeric_limits<double>::infinity();
  scores.assign(static_cast<size_t>(rows * k), init);
  const int64_t trees = forest_.num_trees();
  const int threads = ctx.pool().size();
  // Few rows: split the trees instead, each part into its own scores, merged in part order; only
  // when there is enough work to pay for waking a thread (batch 1 x 500 trees is ~10 us serial).
  constexpr int64_t kRowsPerTask = 64;
  constexpr int64_t kMinTreeRowsToSplit = 4096;
  if (threads > 1 && rows < kRowsPerTask * threads && trees >= 2 * threads && rows * trees >= kMinTreeRowsToSplit) {
    const int parts = threads;
    std::vector<std::vector<double>> partial(parts, std::vector<double>(scores.size(), init));
    ctx.pool().parallel_for(parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p)
        forest_.predict(data, rows, cols, trees * p / parts, trees * (p + 1) / parts, agg, partial[p].data());
    });
    for (const auto& part : partial)
      for (size_t i = 0; i < scores.size(); ++i) {
        double& s = scores[i];
        s = agg == Aggregate::kSum ? s + part[i] : agg == Aggregate::kMin ? std::min(s, part[i]) : std::max(s, part[i]);
      }
    return {};
  }
  ctx.pool().parallel_for(rows, kRowsPerTask, [&](int64_t b, int64_t e) {
    forest_.predict(data + b * cols, e - b, cols, 0, trees, agg, scores.data() + b * k);
  });
  return {};
}

template class BasicForestRunner<float>;
template class BasicForestRunner<double>;

}  // namespace glassbox::ops::ml
