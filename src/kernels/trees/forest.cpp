#include "kernels/trees/forest.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace glassbox::kernels::trees {
namespace {

constexpr int32_t kMissingBit = int32_t(0x80000000u);  // kComplete: feature word flag
constexpr int kRowGroup = 8;     // rows traversed in lockstep (independent loads in flight)
// Rows whose inputs stay in L2 (256 KiB) while every tree passes over them once: the trees are
// streamed once per block, so bigger blocks mean fewer passes over a forest larger than the caches.
inline int64_t row_block(int64_t stride) { return std::clamp<int64_t>(65536 / std::max<int64_t>(1, stride), 64, 4096); }

template <NodeMode M>
inline bool compare(float x, float t) {
  if constexpr (M == NodeMode::kLeq) return x <= t;
  if constexpr (M == NodeMode::kLt) return x < t;
  if constexpr (M == NodeMode::kGte) return x >= t;
  if constexpr (M == NodeMode::kGt) return x > t;
  if constexpr (M == NodeMode::kEq) return x == t;
  return x != t;
}

inline bool goes_true(NodeMode m, float x, float t, bool missing_true) {
  bool r = false;
  switch (m) {
    case NodeMode::kLeq: r = x <= t; break;
    case NodeMode::kLt: r = x < t; break;
    case NodeMode::kGte: r = x >= t; break;
    case NodeMode::kGt: r = x > t; break;
    case NodeMode::kEq: r = x == t; break;
    case NodeMode::kNeq: r = x != t; break;
    case NodeMode::kLeaf: break;
  }
  return r || (missing_true && std::isnan(x));
}

template <Aggregate A>
inline void combine(double& acc, double v) {
  if constexpr (A == Aggregate::kSum) acc += v;
  if constexpr (A == Aggregate::kMin) acc = v < acc ? v : acc;
  if constexpr (A == Aggregate::kMax) acc = v > acc ? v : acc;
}

int tree_depth(const std::vector<TreeNode>& tree) {
  // Iterative: a sparse tree can be thousands of levels deep.
  int depth = 0;
  std::vector<std::pair<int32_t, int>> stack{{0, 0}};
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    depth = std::max(depth, d);
    if (tree[n].mode == NodeMode::kLeaf) continue;
    stack.push_back({tree[n].true_child, d + 1});
    stack.push_back({tree[n].false_child, d + 1});
  }
  return depth;
}

// One mode for all branch nodes? (kLeaf when the forest has only leaves.)
bool uniform_mode(const ForestSpec& spec, NodeMode& mode) {
  mode = NodeMode::kLeaf;
  for (const auto& tree : spec.trees)
    for (const auto& n : tree) {
      if (n.mode == NodeMode::kLeaf) continue;
      if (mode == NodeMode::kLeaf) mode = n.mode;
      if (n.mode != mode) return false;
    }
  return true;
}

}  // namespace

Forest Forest::build(const ForestSpec& spec, const ForestLayoutOptions& options) {
  Forest f;
  f.n_targets_ = spec.n_targets;
  f.leaf_begin_ = spec.leaf_begin;
  f.weight_target_ = spec.weight_target;
  f.weight_value_ = spec.weight_value;
  f.one_weight_per_leaf_ = true;
  for (size_t l = 0; l + 1 < spec.leaf_begin.size(); ++l)
    f.one_weight_per_leaf_ = f.one_weight_per_leaf_ && spec.leaf_begin[l + 1] - spec.leaf_begin[l] == 1;
  for (const auto& tree : spec.trees)
    for (const auto& n : tree)
      if (n.mode != NodeMode::kLeaf) f.max_feature_ = std::max(f.max_feature_, n.feature);

  int max_depth = 0;
  int64_t complete_bytes = 0;
  std::vector<int> depths;
  for (const auto& tree : spec.trees) {
    depths.push_back(tree_depth(tree));
    max_depth = std::max(max_depth, depths.back());
  }
  // Every tree is padded to the deepest one: one step count for all, so trees can go in lockstep too.
  if (max_depth <= options.max_complete_depth)
    complete_bytes = static_cast<int64_t>(spec.trees.size()) * (int64_t{3} << max_depth) * 4;
  NodeMode mode;
  const bool uniform = uniform_mode(spec, mode);
  const std::string shape = std::to_string(spec.trees.size()) + " trees, max depth " + std::to_string(max_depth);
  f.mode_ = uniform ? mode : NodeMode::kLeaf;  // sparse: kLeaf = mixed modes, read per node
  if (!options.allow_complete) {
    f.why_ = "sparse (preorder arrays): complete layout switched off; " + shape;
  } else if (!uniform) {
    f.why_ = "sparse (preorder arrays): branch modes are mixed, the complete layout needs one mode; " + shape;
  } else if (max_depth > options.max_complete_depth) {
    f.why_ = "sparse (preorder arrays): max depth " + std::to_string(max_depth) + " > " +
             std::to_string(options.max_complete_depth) + ", padding to complete trees would be mostly empty; " + shape;
  } else if (complete_bytes > options.max_complete_bytes) {
    f.why_ = "sparse (preorder arrays): complete trees would take " + std::to_string(complete_bytes >> 20) +
             " MiB; " + shape;
  } else {
    f.layout_ = Layout::kComplete;
    f.mode_ = mode == NodeMode::kLeaf ? NodeMode::kLeq : mode;
    f.why_ = "complete (breadth-first, padded to depth " + std::to_string(max_depth) + ", branch-free steps, " +
             std::to_string(kRowGroup) + " rows or, for fewer rows, " + std::to_string(kRowGroup) +
             " trees in lockstep): one branch mode, depth <= " + std::to_string(options.max_complete_depth) + "; " + shape;
  }

  for (size_t t = 0; t < spec.trees.size(); ++t) {
    const auto& tree = spec.trees[t];
    f.tree_offset_.push_back(static_cast<int64_t>(f.layout_ == Layout::kComplete ? f.threshold_.size() : f.nodes_.size()));
    if (f.layout_ == Layout::kComplete) {
      const int d = max_depth;
      const int64_t internal = (int64_t{1} << d) - 1;
      f.tree_depth_.push_back(d);
      f.tree_leaf_offset_.push_back(static_cast<int64_t>(f.leaf_slot_.size()));
      const int64_t base = static_cast<int64_t>(f.threshold_.size());
      const int64_t leaf_base = static_cast<int64_t>(f.leaf_slot_.size());
      f.threshold_.resize(base + internal, 0.f);
      f.feature_.resize(base + internal, 0);
      f.leaf_slot_.resize(leaf_base + internal + 1, -1);
      // (node, slot, level): a leaf above the bottom fills both subtrees of its slot.
      std::vector<std::tuple<int32_t, int64_t, int>> stack{{0, 0, 0}};
      while (!stack.empty()) {
        auto [n, pos, level] = stack.back();
        stack.pop_back();
        const TreeNode& node = tree[n];
        if (level == d) {
          f.leaf_slot_[leaf_base + pos - internal] = node.leaf;
          continue;
        }
        if (node.mode == NodeMode::kLeaf) {
          stack.push_back({n, 2 * pos + 1, level + 1});
          stack.push_back({n, 2 * pos + 2, level + 1});
          continue;
        }
        f.threshold_[base + pos] = node.threshold;
        f.feature_[base + pos] = node.feature | (node.missing_true ? kMissingBit : 0);
        stack.push_back({node.true_child, 2 * pos + 1, level + 1});
        stack.push_back({node.false_child, 2 * pos + 2, level + 1});
      }
    } else {
      // Preorder, false child right after its parent; (node, parent slot of a true child or -1).
      std::vector<std::pair<int32_t, int64_t>> stack{{0, -1}};
      while (!stack.empty()) {
        auto [n, parent] = stack.back();
        stack.pop_back();
        const int64_t pos = static_cast<int64_t>(f.nodes_.size());
        if (parent >= 0) f.nodes_[parent].true_child = static_cast<int32_t>(pos);
        const TreeNode& node = tree[n];
        const bool leaf = node.mode == NodeMode::kLeaf;
        SparseNode sn;
        sn.threshold = node.threshold;
        sn.feature = leaf ? 0 : node.feature;
        sn.true_child = leaf ? node.leaf : -1;  // a leaf's slot holds its leaf id
        sn.flags = static_cast<uint32_t>(static_cast<uint8_t>(node.mode)) | (node.missing_true ? 0x80u : 0u);
        f.nodes_.push_back(sn);
        if (node.mode == NodeMode::kLeaf) continue;
        stack.push_back({node.true_child, pos});
        stack.push_back({node.false_child, -1});
      }
    }
  }
  return f;
}

int64_t Forest::bytes() const {
  return static_cast<int64_t>(threshold_.size() * 4 + feature_.size() * 4 + nodes_.size() * sizeof(SparseNode) +
                              leaf_slot_.size() * 4 + leaf_begin_.size() * 4 + weight_target_.size() * 4 +
                              weight_value_.size() * 4 + tree_offset_.size() * 20);
}

template <Aggregate A>
inline void Forest::add_leaf(int32_t leaf, double* row_scores) const {
  if (one_weight_per_leaf_) {
    const int32_t w = leaf_begin_[leaf];
    combine<A>(row_scores[weight_target_[w]], weight_value_[w]);
    return;
  }
  for (int32_t w = leaf_begin_[leaf]; w < leaf_begin_[leaf + 1]; ++w)
    combine<A>(row_scores[weight_target_[w]], weight_value_[w]);
}

template <NodeMode M, Aggregate A>
void Forest::predict_complete(const float* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1,
                              double* scores) const {
  if (rows < kRowGroup && t1 > t0) {
    // Few rows (batch 1): the latency of one row's dependent loads is hidden by walking
    // kRowGroup trees at once; all trees have the same padded depth. Leaves are added in tree order.
    const int depth = tree_depth_[t0];
    const int64_t internal = (int64_t{1} << depth) - 1;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x + r * stride;
      double* out = scores + r * n_targets_;
      for (int64_t g = t0; g < t1; g += kRowGroup) {
        const int n = static_cast<int>(std::min<int64_t>(kRowGroup, t1 - g));
        int64_t idx[kRowGroup] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int level = 0; level < depth; ++level)
          for (int k = 0; k < n; ++k) {
            const int64_t node = tree_offset_[g + k] + idx[k];
            const int32_t fw = feature_[node];
            const float v = row[fw & 0x7fffffff];
            const bool tr = compare<M>(v, threshold_[node]) | ((fw < 0) & (v != v));
            idx[k] = 2 * idx[k] + 2 - static_cast<int64_t>(tr);
          }
        for (int k = 0; k < n; ++k) add_leaf<A>(leaf_slot_[tree_leaf_offset_[g + k] + idx[k] - internal], out);
      }
    }
    return;
  }
  const int64_t block = row_block(stride);
  for (int64_t b0 = 0; b0 < rows; b0 += block) {
    const int64_t b1 = std::min(rows, b0 + block);
    for (int64_t t = t0; t < t1; ++t) {
      const float* thr = threshold_.data() + tree_offset_[t];
      const int32_t* feat = feature_.data() + tree_offset_[t];
      const int32_t* slots = leaf_slot_.data() + tree_leaf_offset_[t];
      const int depth = tree_depth_[t];
      const int64_t internal = (int64_t{1} << depth) - 1;
      for (int64_t r0 = b0; r0 < b1; r0 += kRowGroup) {
        const int n = static_cast<int>(std::min<int64_t>(kRowGroup, b1 - r0));
        int64_t idx[kRowGroup] = {0, 0, 0, 0, 0, 0, 0, 0};
        const float* row = x + r0 * stride;
        for (int level = 0; level < depth; ++level)
          for (int k = 0; k < n; ++k) {
            const int32_t fw = feat[idx[k]];
            const float v = row[k * stride + (fw & 0x7fffffff)];
            const bool tr = compare<M>(v, thr[idx[k]]) | ((fw < 0) & (v != v));
            idx[k] = 2 * idx[k] + 2 - static_cast<int64_t>(tr);
          }
        for (int k = 0; k < n; ++k) add_leaf<A>(slots[idx[k] - internal], scores + (r0 + k) * n_targets_);
      }
    }
  }
}

// M: the forest's one branch mode, or kLeaf for mixed modes (read per node).
template <NodeMode M, Aggregate A>
void Forest::predict_sparse(const float* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1,
                            double* scores) const {
  // kRowGroup lanes walk a tree, each on its own row; a lane that reaches a leaf adds it and takes
  // the next row of the block, so several independent paths are always in flight (deep trees of
  // uneven depth would leave lockstep lanes idle). Per row the trees still add in order.
  const int64_t block = row_block(stride);
  for (int64_t b0 = 0; b0 < rows; b0 += block) {
    const int64_t b1 = std::min(rows, b0 + block);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t root = tree_offset_[t];
      int64_t lane_row[kRowGroup], lane_node[kRowGroup];
      int64_t next_row = b0;
      int active = 0;
      for (int k = 0; k < kRowGroup; ++k) {
        lane_row[k] = next_row < b1 ? next_row++ : -1;
        lane_node[k] = root;
        active += lane_row[k] >= 0;
      }
      while (active > 0) {
        for (int k = 0; k < kRowGroup; ++k) {
          if (lane_row[k] < 0) continue;
          const int64_t i = lane_node[k];
          const SparseNode& node = nodes_[i];
          const uint32_t mf = node.flags;
          if ((mf & 0x7f) == static_cast<uint32_t>(NodeMode::kLeaf)) {
            add_leaf<A>(node.true_child, scores + lane_row[k] * n_targets_);
            lane_node[k] = root;
            lane_row[k] = next_row < b1 ? next_row++ : -1;
            active -= lane_row[k] < 0;
            continue;
          }
          const float v = x[lane_row[k] * stride + node.feature];
          bool tr;
          if constexpr (M == NodeMode::kLeaf) tr = goes_true(static_cast<NodeMode>(mf & 0x7f), v, node.threshold, (mf & 0x80) != 0);
          else tr = compare<M>(v, node.threshold) | (((mf & 0x80) != 0) & (v != v));
          lane_node[k] = tr ? node.true_child : i + 1;
        }
      }
    }
  }
}

void Forest::predict(const float* x, int64_t rows, int64_t stride, int64_t tree_begin, int64_t tree_end, Aggregate agg,
                     double* scores) const {
  auto run = [&]<Aggregate A>() {
    if (layout_ == Layout::kSparse) {
      switch (mode_) {
        case NodeMode::kLeq: return predict_sparse<NodeMode::kLeq, A>(x, rows, stride, tree_begin, tree_end, scores);
        case NodeMode::kLt: return predict_sparse<NodeMode::kLt, A>(x, rows, stride, tree_begin, tree_end, scores);
        default: return predict_sparse<NodeMode::kLeaf, A>(x, rows, stride, tree_begin, tree_end, scores);
      }
    }
    switch (mode_) {
      case NodeMode::kLeq: return predict_complete<NodeMode::kLeq, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kLt: return predict_complete<NodeMode::kLt, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kGte: return predict_complete<NodeMode::kGte, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kGt: return predict_complete<NodeMode::kGt, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kEq: return predict_complete<NodeMode::kEq, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kNeq:
      case NodeMode::kLeaf: return predict_complete<NodeMode::kNeq, A>(x, rows, stride, tree_begin, tree_end, scores);
    }
  };
  switch (agg) {
    case Aggregate::kSum: return run.template operator()<Aggregate::kSum>();
    case Aggregate::kMin: return run.template operator()<Aggregate::kMin>();
    case Aggregate::kMax: return run.template operator()<Aggregate::kMax>();
  }
}

void predict_reference(const ForestSpec& spec, const float* x, int64_t rows, int64_t stride, Aggregate agg,
                       double* scores) {
  for (int64_t r = 0; r < rows; ++r)
    for (const auto& tree : spec.trees) {
      int32_t n = 0;
      while (tree[n].mode != NodeMode::kLeaf) {
        const TreeNode& node = tree[n];
        n = goes_true(node.mode, x[r * stride + node.feature], node.threshold, node.missing_true) ? node.true_child
                                                                                                : node.false_child;
      }
      const int32_t leaf = tree[n].leaf;
      for (int32_t w = spec.leaf_begin[leaf]; w < spec.leaf_begin[leaf + 1]; ++w) {
        double& acc = scores[r * spec.n_targets + spec.weight_target[w]];
        const double v = spec.weight_value[w];
        acc = agg == Aggregate::kSum ? acc + v : agg == Aggregate::kMin ? std::min(acc, v) : std::max(acc, v);
      }
    }
}

}  // namespace glassbox::kernels::trees
