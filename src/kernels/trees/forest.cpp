#include "kernels/trees/forest.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <tuple>
#include <type_traits>
#include <utility>

namespace glassbox::kernels::trees {
namespace {

constexpr int32_t kMissingBit = int32_t(0x80000000u);  // kComplete: feature word flag
constexpr uint32_t kSparseMissing = 0x10;   // kSparse flags: NaN goes to the true child
constexpr uint32_t kSparseNextTrue = 0x20;  // kSparse flags: the true child is the next node
// kSparse 8-byte nodes (CompactNode::word): leaf: id << 1 | 1; branch: missing-true (bit 1), the
// true child is next (bit 2), feature (bits 3-14), distance to the other child (bits 15-31).
constexpr uint32_t kCompactLeaf = 1, kCompactMissing = 2, kCompactNextTrue = 4;
constexpr int kCompactFeatureShift = 3, kCompactDeltaShift = 15;
constexpr uint32_t kCompactFeatureMask = 0xfff;
constexpr int64_t kCompactMaxDelta = (int64_t{1} << 17) - 1;
constexpr int kRowGroup = 8;     // rows traversed in lockstep (independent loads in flight)
// Rows whose inputs stay in L2 (256 KiB) while every tree passes over them once: the trees are
// streamed once per block, so bigger blocks mean fewer passes over a forest larger than the caches.
inline int64_t row_block(int64_t stride) { return std::clamp<int64_t>(65536 / std::max<int64_t>(1, stride), 64, 4096); }
// kSparse: rows walked per tree at once, and the rows' input bytes per block. Deep trees are
// tens of KiB each and the first walks of a block pull a tree into L1/L2 node by node, so a pass
// over the forest is paid per block: blocks of ~1 MiB of inputs (in L2/L3) measured fastest on
// the 100-tree forest (docs/benchmarks-history.md, trees "Run 2"; 128 KiB: 1.2x slower, 32 KiB:
// 2x slower; 8 vs 16 lanes made no difference).
constexpr int kSparseLanes = 8;
inline int64_t sparse_row_block(int64_t row_bytes) {
  return std::clamp<int64_t>((int64_t{1} << 20) / std::max<int64_t>(1, row_bytes), 64, 16384);
}

template <NodeMode M, typename T>
inline bool compare(T x, T t) {
  if constexpr (M == NodeMode::kLeq) return x <= t;
  if constexpr (M == NodeMode::kLt) return x < t;
  if constexpr (M == NodeMode::kGte) return x >= t;
  if constexpr (M == NodeMode::kGt) return x > t;
  if constexpr (M == NodeMode::kEq) return x == t;
  return x != t;
}

template <typename T>
inline bool goes_true(NodeMode m, T x, T t, bool missing_true) {
  bool r = false;
  switch (m) {
    case NodeMode::kLeq: r = x <= t; break;
    case NodeMode::kLt: r = x < t; break;
    case NodeMode::kGte: r = x >= t; break;
    case NodeMode::kGt: r = x > t; break;
    case NodeMode::kEq: r = x == t; break;
    case NodeMode::kNeq: r = x != t; break;
    case NodeMode::kLeaf:
    case NodeMode::kMember: break;  // kMember: the caller tests the set
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

// One comparison mode for all branch nodes? (kLeaf when the forest has only leaves; set
// membership always counts as mixed: it is tested per node.)
bool uniform_mode(const ForestSpec& spec, NodeMode& mode) {
  mode = NodeMode::kLeaf;
  for (const auto& tree : spec.trees)
    for (const auto& n : tree) {
      if (n.mode == NodeMode::kLeaf) continue;
      if (n.mode == NodeMode::kMember) return false;
      if (mode == NodeMode::kLeaf) mode = n.mode;
      if (n.mode != mode) return false;
    }
  return true;
}

// Node counts of every subtree (iterative: sparse trees can be thousands of levels deep).
std::vector<int64_t> subtree_sizes(const std::vector<TreeNode>& tree) {
  std::vector<int64_t> size(tree.size(), 1);
  std::vector<int32_t> order;  // preorder; children after parents, so reverse order sums bottom-up
  std::vector<int32_t> stack{0};
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    if (tree[n].mode == NodeMode::kLeaf) continue;
    stack.push_back(tree[n].true_child);
    stack.push_back(tree[n].false_child);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (tree[*it].mode != NodeMode::kLeaf) size[*it] += size[tree[*it].true_child] + size[tree[*it].false_child];
  return size;
}

// Which child of a branch the sparse layout puts next: the one with the higher hit rate when both
// are given and differ, else the one with the larger subtree (with training counts behind them,
// deeper subtrees are where more rows went), ties to the false child.
bool true_child_first(const std::vector<TreeNode>& tree, const std::vector<int64_t>& size, const TreeNode& n) {
  const TreeNode& t = tree[n.true_child];
  const TreeNode& f = tree[n.false_child];
  if (t.hitrate >= 0 && f.hitrate >= 0 && t.hitrate != f.hitrate) return t.hitrate > f.hitrate;
  return size[n.true_child] > size[n.false_child];
}

}  // namespace

template <typename T>
BasicForest<T> BasicForest<T>::build(const ForestSpec& spec, const ForestLayoutOptions& options) {
  BasicForest f;
  f.n_targets_ = spec.n_targets;
  f.leaf_begin_ = spec.leaf_begin;
  f.weight_target_ = spec.weight_target;
  f.weight_value_ = spec.weight_value;
  f.one_weight_per_leaf_ = true;
  for (size_t l = 0; l + 1 < spec.leaf_begin.size(); ++l)
    f.one_weight_per_leaf_ = f.one_weight_per_leaf_ && spec.leaf_begin[l + 1] - spec.leaf_begin[l] == 1;
  for (const auto& set : spec.member_sets) {
    std::vector<T> s(set.begin(), set.end());
    std::sort(s.begin(), s.end());
    f.member_.push_back(std::move(s));
  }
  for (const auto& tree : spec.trees)
    for (const auto& n : tree)
      if (n.mode != NodeMode::kLeaf) f.max_feature_ = std::max(f.max_feature_, n.feature);

  int max_depth = 0;
  int64_t complete_bytes = 0;
  for (const auto& tree : spec.trees) max_depth = std::max(max_depth, tree_depth(tree));
  // Every tree is padded to the deepest one: one step count for all, so trees can go in lockstep too.
  if (max_depth <= options.max_complete_depth)
    complete_bytes = static_cast<int64_t>(spec.trees.size()) * (int64_t{1} << max_depth) * (sizeof(T) + 8);
  NodeMode mode;
  const bool uniform = uniform_mode(spec, mode);
  const std::string shape = std::to_string(spec.trees.size()) + " trees, max depth " + std::to_string(max_depth);
  bool hitrates = false;
  for (const auto& tree : spec.trees)
    for (const auto& n : tree) hitrates = hitrates || n.hitrate >= 0;
  const std::string sparse = std::string("sparse (preorder arrays, likelier child next by ") +
                             (hitrates ? "nodes_hitrates" : "subtree size") + ")";
  f.mode_ = uniform ? mode : NodeMode::kLeaf;  // sparse: kLeaf = mixed modes, read per node
  if (!options.allow_complete) {
    f.why_ = sparse + ": complete layout switched off; " + shape;
  } else if (!uniform) {
    f.why_ = sparse + ": branch modes are mixed (or set membership), the complete layout needs one comparison; " + shape;
  } else if (max_depth > options.max_complete_depth) {
    f.why_ = sparse + ": max depth " + std::to_string(max_depth) + " > " + std::to_string(options.max_complete_depth) +
             ", padding to complete trees would be mostly empty; " + shape;
  } else if (complete_bytes > options.max_complete_bytes) {
    f.why_ = sparse + ": complete trees would take " + std::to_string(complete_bytes >> 20) + " MiB; " + shape;
  } else {
    f.layout_ = Layout::kComplete;
    f.mode_ = mode == NodeMode::kLeaf ? NodeMode::kLeq : mode;
    f.why_ = "complete (breadth-first, padded to depth " + std::to_string(max_depth) + ", branch-free steps, " +
             std::to_string(kRowGroup) + " rows or, for fewer rows, " + std::to_string(kRowGroup) +
             " trees in lockstep): one branch mode, depth <= " + std::to_string(options.max_complete_depth) + "; " + shape;
  }
  for (const auto& tree : spec.trees) {
    if (f.layout_ == Layout::kComplete) f.add_complete_tree(tree, max_depth);
    else f.add_sparse_tree(tree);
  }
  if (f.layout_ == Layout::kSparse && f.make_compact()) f.why_ += "; 8-byte nodes";
  return f;
}

template <typename T>
void BasicForest<T>::add_complete_tree(const std::vector<TreeNode>& tree, int d) {
  tree_offset_.push_back(static_cast<int64_t>(threshold_.size()));
  const int64_t internal = (int64_t{1} << d) - 1;
  tree_depth_.push_back(d);
  tree_leaf_offset_.push_back(static_cast<int64_t>(leaf_slot_.size()));
  const int64_t base = static_cast<int64_t>(threshold_.size());
  const int64_t leaf_base = static_cast<int64_t>(leaf_slot_.size());
  threshold_.resize(base + internal, T(0));
  feature_.resize(base + internal, 0);
  leaf_slot_.resize(leaf_base + internal + 1, -1);
  // (node, slot, level): a leaf above the bottom fills both subtrees of its slot.
  std::vector<std::tuple<int32_t, int64_t, int>> stack{{0, 0, 0}};
  while (!stack.empty()) {
    auto [n, pos, level] = stack.back();
    stack.pop_back();
    const TreeNode& node = tree[n];
    if (level == d) {
      leaf_slot_[leaf_base + pos - internal] = node.leaf;
      continue;
    }
    if (node.mode == NodeMode::kLeaf) {
      stack.push_back({n, 2 * pos + 1, level + 1});
      stack.push_back({n, 2 * pos + 2, level + 1});
      continue;
    }
    threshold_[base + pos] = static_cast<T>(node.threshold);
    feature_[base + pos] = node.feature | (node.missing_true ? kMissingBit : 0);
    stack.push_back({node.true_child, 2 * pos + 1, level + 1});
    stack.push_back({node.false_child, 2 * pos + 2, level + 1});
  }
}

template <typename T>
void BasicForest<T>::add_sparse_tree(const std::vector<TreeNode>& tree) {
  tree_offset_.push_back(static_cast<int64_t>(nodes_.size()));
  const std::vector<int64_t> size = subtree_sizes(tree);
  // Preorder with the likelier child next; (node, slot whose jump points here or -1).
  std::vector<std::pair<int32_t, int64_t>> stack{{0, -1}};
  while (!stack.empty()) {
    auto [n, parent] = stack.back();
    stack.pop_back();
    const int64_t pos = static_cast<int64_t>(nodes_.size());
    if (parent >= 0) nodes_[parent].jump = static_cast<int32_t>(pos);
    const TreeNode& node = tree[n];
    SparseNode sn{};
    sn.flags = static_cast<uint32_t>(node.mode) | (node.missing_true ? kSparseMissing : 0u);
    if (node.mode == NodeMode::kLeaf) {
      sn.feature = node.leaf;
      nodes_.push_back(sn);
      continue;
    }
    sn.threshold = static_cast<T>(node.threshold);
    sn.feature = node.feature;
    sn.jump = -1;
    if (node.mode == NodeMode::kMember) sn.flags |= static_cast<uint32_t>(node.member_set) << 8;
    const bool true_first = true_child_first(tree, size, node);
    if (true_first) sn.flags |= kSparseNextTrue;
    nodes_.push_back(sn);
    const int32_t next = true_first ? node.true_child : node.false_child;
    const int32_t other = true_first ? node.false_child : node.true_child;
    stack.push_back({other, pos});
    stack.push_back({next, -1});
  }
}

// 8-byte nodes halve a deep forest's footprint (the walks are bound by pulling trees into the
// caches): possible with one comparison mode that has a specialised walk (LEQ, LT), float
// thresholds, features < 4096, the other child < 2^17 nodes away and leaf ids < 2^31.
template <typename T>
bool BasicForest<T>::make_compact() {
  if (!std::is_same_v<T, float> || (mode_ != NodeMode::kLeq && mode_ != NodeMode::kLt)) return false;
  std::vector<CompactNode> c(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const SparseNode& n = nodes_[i];
    const int64_t feature = n.feature;  // a leaf's id
    if ((n.flags & 0xf) == static_cast<uint32_t>(NodeMode::kLeaf)) {
      if (feature < 0 || feature > INT32_MAX / 2) return false;
      c[i].word = (static_cast<uint32_t>(feature) << 1) | kCompactLeaf;
      continue;
    }
    const int64_t delta = static_cast<int64_t>(n.jump) - static_cast<int64_t>(i);
    if (feature < 0 || feature > int64_t{kCompactFeatureMask} || delta < 1 || delta > kCompactMaxDelta) return false;
    c[i].threshold = static_cast<float>(n.threshold);
    c[i].word = (static_cast<uint32_t>(delta) << kCompactDeltaShift) |
                (static_cast<uint32_t>(n.feature) << kCompactFeatureShift) |
                ((n.flags & kSparseMissing) ? kCompactMissing : 0u) | ((n.flags & kSparseNextTrue) ? kCompactNextTrue : 0u);
  }
  compact_ = std::move(c);
  nodes_.clear();
  nodes_.shrink_to_fit();
  return true;
}

template <typename T>
int64_t BasicForest<T>::bytes() const {
  int64_t members = 0;
  for (const auto& s : member_) members += static_cast<int64_t>(s.size() * sizeof(T));
  return static_cast<int64_t>(threshold_.size() * sizeof(T) + feature_.size() * 4 + nodes_.size() * sizeof(SparseNode) + compact_.size() * 8 +
                              leaf_slot_.size() * 4 + leaf_begin_.size() * 4 + weight_target_.size() * 4 +
                              weight_value_.size() * 8 + tree_offset_.size() * 20) +
         members;
}

template <typename T>
template <Aggregate A>
inline void BasicForest<T>::add_leaf(int32_t leaf, double* row_scores) const {
  if (one_weight_per_leaf_) {
    const int32_t w = leaf_begin_[leaf];
    combine<A>(row_scores[weight_target_[w]], weight_value_[w]);
    return;
  }
  for (int32_t w = leaf_begin_[leaf]; w < leaf_begin_[leaf + 1]; ++w)
    combine<A>(row_scores[weight_target_[w]], weight_value_[w]);
}

template <typename T>
inline bool BasicForest<T>::is_member(uint32_t flags, T v) const {
  const auto& s = member_[flags >> 8];
  // NaN is in no set: binary_search alone would say yes (NaN is neither less nor greater than anything).
  return v == v && std::binary_search(s.begin(), s.end(), v);
}

template <typename T>
template <NodeMode M, Aggregate A>
void BasicForest<T>::predict_complete(const T* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1,
                                      double* scores) const {
  if (rows < kRowGroup && t1 > t0) {
    // Few rows (batch 1): the latency of one row's dependent loads is hidden by walking
    // kRowGroup trees at once; all trees have the same padded depth. Leaves are added in tree order.
    const int depth = tree_depth_[t0];
    const int64_t internal = (int64_t{1} << depth) - 1;
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * stride;
      double* out = scores + r * n_targets_;
      for (int64_t g = t0; g < t1; g += kRowGroup) {
        const int n = static_cast<int>(std::min<int64_t>(kRowGroup, t1 - g));
        int64_t idx[kRowGroup] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int level = 0; level < depth; ++level)
          for (int k = 0; k < n; ++k) {
            const int64_t node = tree_offset_[g + k] + idx[k];
            const int32_t fw = feature_[node];
            const T v = row[fw & 0x7fffffff];
            const bool tr = compare<M>(v, threshold_[node]) | ((fw < 0) & (v != v));
            idx[k] = 2 * idx[k] + 2 - static_cast<int64_t>(tr);
          }
        for (int k = 0; k < n; ++k) add_leaf<A>(leaf_slot_[tree_leaf_offset_[g + k] + idx[k] - internal], out);
      }
    }
    return;
  }
  const int64_t block = row_block(stride * static_cast<int64_t>(sizeof(T) / 4));
  for (int64_t b0 = 0; b0 < rows; b0 += block) {
    const int64_t b1 = std::min(rows, b0 + block);
    for (int64_t t = t0; t < t1; ++t) {
      const T* thr = threshold_.data() + tree_offset_[t];
      const int32_t* feat = feature_.data() + tree_offset_[t];
      const int32_t* slots = leaf_slot_.data() + tree_leaf_offset_[t];
      const int depth = tree_depth_[t];
      const int64_t internal = (int64_t{1} << depth) - 1;
      for (int64_t r0 = b0; r0 < b1; r0 += kRowGroup) {
        const int n = static_cast<int>(std::min<int64_t>(kRowGroup, b1 - r0));
        int64_t idx[kRowGroup] = {0, 0, 0, 0, 0, 0, 0, 0};
        const T* row = x + r0 * stride;
        for (int level = 0; level < depth; ++level)
          for (int k = 0; k < n; ++k) {
            const int32_t fw = feat[idx[k]];
            const T v = row[k * stride + (fw & 0x7fffffff)];
            const bool tr = compare<M>(v, thr[idx[k]]) | ((fw < 0) & (v != v));
            idx[k] = 2 * idx[k] + 2 - static_cast<int64_t>(tr);
          }
        for (int k = 0; k < n; ++k) add_leaf<A>(slots[idx[k] - internal], scores + (r0 + k) * n_targets_);
      }
    }
  }
}

// One step of a sparse walk from node i on row values `row`: the next node index (branch-free: the
// likelier child is i + 1, the other one is node.jump).
template <typename T>
template <NodeMode M>
inline int64_t BasicForest<T>::sparse_step(const SparseNode& node, int64_t i, const T* row) const {
  const T v = row[node.feature];
  const uint32_t mf = node.flags;
  const bool missing = (mf & kSparseMissing) != 0;
  bool tr;
  if constexpr (M == NodeMode::kLeaf) {
    const auto m = static_cast<NodeMode>(mf & 0xf);
    tr = m == NodeMode::kMember ? is_member(mf, v) || (missing && v != v) : goes_true(m, v, node.threshold, missing);
  } else {
    tr = compare<M>(v, node.threshold) | (missing & (v != v));
  }
  const int64_t take_jump = static_cast<int64_t>(tr != ((mf & kSparseNextTrue) != 0));
  return i + 1 + ((node.jump - i - 1) & -take_jump);
}

// The same step on an 8-byte node (one comparison mode, T = float; see compact_).
template <NodeMode M, typename T>
inline int64_t compact_step(CompactNode node, int64_t i, const T* row) {
  const uint32_t w = node.word;
  const T v = row[(w >> kCompactFeatureShift) & kCompactFeatureMask];
  const bool tr = compare<M>(v, static_cast<T>(node.threshold)) | (((w & kCompactMissing) != 0) & (v != v));
  const int64_t take_jump = static_cast<int64_t>(tr != ((w & kCompactNextTrue) != 0));
  return i + 1 + ((static_cast<int64_t>(w >> kCompactDeltaShift) - 1) & -take_jump);
}

// M: the forest's one branch mode, or kLeaf for mixed modes / set membership (read per node).
// C: walk the 8-byte nodes (compact_) instead of the 16-byte ones.
template <typename T>
template <NodeMode M, Aggregate A, bool C>
void BasicForest<T>::predict_sparse(const T* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1,
                                    double* scores) const {
  // kSparseLanes lanes walk a tree, each on its own row; a lane that reaches a leaf adds it and
  // takes the next row of the block, so several independent paths are always in flight (deep
  // trees of uneven depth would leave lockstep lanes idle). Steps are branch-free; the only
  // unpredictable branch is "reached a leaf", once per row and tree. Per row the trees still add
  // in order.
  const int64_t block = sparse_row_block(stride * static_cast<int64_t>(sizeof(T)));
  const SparseNode* nodes = nodes_.data();
  const CompactNode* compact = compact_.data();
  auto is_leaf = [&](int64_t i) {
    if constexpr (C) return (compact[i].word & kCompactLeaf) != 0;
    else return (nodes[i].flags & 0xf) == static_cast<uint32_t>(NodeMode::kLeaf);
  };
  auto leaf_id = [&](int64_t i) {
    if constexpr (C) return static_cast<int32_t>(compact[i].word >> 1);
    else return nodes[i].feature;
  };
  auto step = [&](int64_t i, const T* row) {
    if constexpr (C) return compact_step<M>(compact[i], i, row);
    else return sparse_step<M>(nodes[i], i, row);
  };
  auto walk = [&](int64_t i, const T* row) {
    while (!is_leaf(i)) i = step(i, row);
    return leaf_id(i);
  };
  for (int64_t b0 = 0; b0 < rows; b0 += block) {
    const int64_t b1 = std::min(rows, b0 + block);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t root = tree_offset_[t];
      int64_t next_row = b0;
      if (b1 - b0 < kSparseLanes) {  // fewer rows than lanes (batch 1)
        for (int64_t r = b0; r < b1; ++r) add_leaf<A>(walk(root, x + r * stride), scores + r * n_targets_);
        continue;
      }
      int64_t lane_row[kSparseLanes], lane_node[kSparseLanes];
      for (int k = 0; k < kSparseLanes; ++k) {
        lane_row[k] = next_row++;
        lane_node[k] = root;
      }
      // All lanes busy until the rows run out; the other lanes' last rows finish below.
      bool done = false;
      while (!done) {
        for (int k = 0; k < kSparseLanes; ++k) {
          const int64_t i = lane_node[k];
          if (is_leaf(i)) {
            add_leaf<A>(leaf_id(i), scores + lane_row[k] * n_targets_);
            if (next_row == b1) {
              lane_row[k] = -1;
              done = true;
              break;
            }
            lane_row[k] = next_row++;
            lane_node[k] = root;
            continue;
          }
          lane_node[k] = step(i, x + lane_row[k] * stride);
        }
      }
      for (int k = 0; k < kSparseLanes; ++k)
        if (lane_row[k] >= 0) add_leaf<A>(walk(lane_node[k], x + lane_row[k] * stride), scores + lane_row[k] * n_targets_);
    }
  }
}

template <typename T>
void BasicForest<T>::predict(const T* x, int64_t rows, int64_t stride, int64_t tree_begin, int64_t tree_end,
                             Aggregate agg, double* scores) const {
  auto run = [&]<Aggregate A>() {
    if (layout_ == Layout::kSparse) {
      switch (mode_) {
        case NodeMode::kLeq:
          if (!compact_.empty()) return predict_sparse<NodeMode::kLeq, A, true>(x, rows, stride, tree_begin, tree_end, scores);
          return predict_sparse<NodeMode::kLeq, A, false>(x, rows, stride, tree_begin, tree_end, scores);
        case NodeMode::kLt:
          if (!compact_.empty()) return predict_sparse<NodeMode::kLt, A, true>(x, rows, stride, tree_begin, tree_end, scores);
          return predict_sparse<NodeMode::kLt, A, false>(x, rows, stride, tree_begin, tree_end, scores);
        default: return predict_sparse<NodeMode::kLeaf, A, false>(x, rows, stride, tree_begin, tree_end, scores);
      }
    }
    switch (mode_) {
      case NodeMode::kLeq: return predict_complete<NodeMode::kLeq, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kLt: return predict_complete<NodeMode::kLt, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kGte: return predict_complete<NodeMode::kGte, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kGt: return predict_complete<NodeMode::kGt, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kEq: return predict_complete<NodeMode::kEq, A>(x, rows, stride, tree_begin, tree_end, scores);
      case NodeMode::kNeq:
      case NodeMode::kLeaf:
      case NodeMode::kMember: return predict_complete<NodeMode::kNeq, A>(x, rows, stride, tree_begin, tree_end, scores);
    }
  };
  switch (agg) {
    case Aggregate::kSum: return run.template operator()<Aggregate::kSum>();
    case Aggregate::kMin: return run.template operator()<Aggregate::kMin>();
    case Aggregate::kMax: return run.template operator()<Aggregate::kMax>();
  }
}

template class BasicForest<float>;
template class BasicForest<double>;

template <typename T>
void predict_reference(const ForestSpec& spec, const T* x, int64_t rows, int64_t stride, Aggregate agg,
                       double* scores) {
  for (int64_t r = 0; r < rows; ++r)
    for (const auto& tree : spec.trees) {
      int32_t n = 0;
      while (tree[n].mode != NodeMode::kLeaf) {
        const TreeNode& node = tree[n];
        const T v = x[r * stride + node.feature];
        bool tr;
        if (node.mode == NodeMode::kMember) {
          const auto& s = spec.member_sets[node.member_set];
          tr = std::find(s.begin(), s.end(), static_cast<double>(v)) != s.end() || (node.missing_true && std::isnan(v));
        } else {
          tr = goes_true<double>(node.mode, v, node.threshold, node.missing_true);
        }
        n = tr ? node.true_child : node.false_child;
      }
      const int32_t leaf = tree[n].leaf;
      for (int32_t w = spec.leaf_begin[leaf]; w < spec.leaf_begin[leaf + 1]; ++w) {
        double& acc = scores[r * spec.n_targets + spec.weight_target[w]];
        const double v = spec.weight_value[w];
        acc = agg == Aggregate::kSum ? acc + v : agg == Aggregate::kMin ? std::min(acc, v) : std::max(acc, v);
      }
    }
}

template void predict_reference<float>(const ForestSpec&, const float*, int64_t, int64_t, Aggregate, double*);
template void predict_reference<double>(const ForestSpec&, const double*, int64_t, int64_t, Aggregate, double*);

}  // namespace glassbox::kernels::trees
