// Tree-ensemble inference on flat arrays built once at load. The op layer
// (src/ops/ml/tree_ensemble_common.cpp) validates the ONNX attributes and hands
// over a ForestSpec (trees with local node indices, checked acyclic and in
// range); build_forest picks a layout and predict accumulates leaf weights.
//
// Layouts (docs/kernels.md, "Tree ensembles"):
//  - kComplete: every tree is padded to a complete binary tree of the forest's depth
//    (a leaf above the bottom becomes a node whose two subtrees both end in that
//    leaf), stored breadth-first: child = 2i+1 + went_false. Traversal is a fixed
//    number of branch-free steps, interleaved over 8 rows (or, for fewer rows, 8
//    trees) so several independent loads are in flight at once. Chosen when all
//    branch nodes share one mode, the depth is <= max_complete_depth and the padded
//    size stays within max_complete_bytes.
//  - kSparse: preorder arrays where the likelier child (higher nodes_hitrates when the
//    model gives them, else the larger subtree) is the next node and the other one is
//    stored, so the common path runs through consecutive nodes; 8 lanes walking a tree
//    on different rows, a lane taking the next row when it reaches a leaf; any depth,
//    mixed modes, set membership.
// Routing: a row goes to the true child when `x MODE threshold` (kMember: x equals a
// value of the node's set), or when x is NaN and the node's missing value tracks true
// (a NaN fails every comparison but NEQ).
// T is the type of X and of the thresholds (float; double for TreeEnsemble with double X).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glassbox::kernels::trees {

enum class NodeMode : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf, kMember };
enum class Aggregate : uint8_t { kSum, kMin, kMax };  // AVERAGE is kSum divided by the tree count

struct TreeNode {
  NodeMode mode = NodeMode::kLeaf;
  bool missing_true = false;  // NaN goes to the true child
  int32_t feature = 0;
  double threshold = 0.0;    // exact for float models (float -> double)
  int32_t member_set = -1;   // kMember: index into ForestSpec::member_sets
  double hitrate = -1.0;     // nodes_hitrates (< 0: not given); orders the sparse layout
  int32_t true_child = -1;   // local index (branch nodes)
  int32_t false_child = -1;  // local index (branch nodes)
  int32_t leaf = -1;         // index into ForestSpec::leaf_begin (leaf nodes)
};

struct ForestSpec {
  std::vector<std::vector<TreeNode>> trees;  // node 0 of each tree is its root
  std::vector<int32_t> leaf_begin;           // weights of leaf l: [leaf_begin[l], leaf_begin[l + 1])
  std::vector<int32_t> weight_target;        // target (class) of each weight, in [0, n_targets)
  std::vector<double> weight_value;
  std::vector<std::vector<double>> member_sets;  // kMember nodes: the values that go to the true child
  int32_t n_targets = 1;
};

struct ForestLayoutOptions {
  int max_complete_depth = 12;                  // deeper trees would be mostly padding
  int64_t max_complete_bytes = int64_t{64} << 20;   // padding must not blow up memory (500 depth-8 trees: 1.5 MiB)
  bool allow_complete = true;                   // false: always the sparse layout (tests, explain)
};

enum class Layout { kComplete, kSparse };

// kSparse in 8 bytes (one comparison mode, float): threshold + a word packing leaf/feature/flags/
// distance to the other child (forest.cpp).
struct CompactNode {
  float threshold = 0.f;
  uint32_t word = 0;
};

template <typename T>
class BasicForest {
 public:
  // spec must be valid (the op layer checks it); returns the chosen layout.
  static BasicForest build(const ForestSpec& spec, const ForestLayoutOptions& options = {});

  int64_t num_trees() const { return static_cast<int64_t>(tree_offset_.size()); }
  int32_t n_targets() const { return n_targets_; }
  int32_t max_feature() const { return max_feature_; }
  Layout layout() const { return layout_; }
  // One line: layout, sizes, and why it was chosen.
  const std::string& describe() const { return why_; }
  int64_t bytes() const;

  // For rows [0, rows) of x (row stride `stride` floats), aggregates the leaf weights of
  // trees [tree_begin, tree_end) into scores (rows x n_targets, row-major), which the
  // caller initialised (0 for kSum, +inf for kMin, -inf for kMax). Sums are in double.
  void predict(const T* x, int64_t rows, int64_t stride, int64_t tree_begin, int64_t tree_end, Aggregate agg,
               double* scores) const;

 private:
  template <NodeMode M, Aggregate A>
  void predict_complete(const T* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1, double* scores) const;
  template <NodeMode M, Aggregate A, bool C>
  void predict_sparse(const T* x, int64_t rows, int64_t stride, int64_t t0, int64_t t1, double* scores) const;
  template <Aggregate A>
  void add_leaf(int32_t leaf, double* row_scores) const;
  bool is_member(uint32_t flags, T v) const;
  struct SparseNode;
  template <NodeMode M>
  int64_t sparse_step(const SparseNode& node, int64_t i, const T* row) const;
  void add_complete_tree(const std::vector<TreeNode>& tree, int depth);
  void add_sparse_tree(const std::vector<TreeNode>& tree);
  bool make_compact();

  Layout layout_ = Layout::kSparse;
  NodeMode mode_ = NodeMode::kLeq;  // kComplete: the one branch mode
  int32_t n_targets_ = 1;
  int32_t max_feature_ = -1;
  std::string why_;
  // Both layouts: per tree, where its nodes start (and kComplete: its padded depth, the same for all).
  std::vector<int64_t> tree_offset_;
  std::vector<int32_t> tree_depth_;
  std::vector<int64_t> tree_leaf_offset_;  // kComplete: first leaf slot of the tree
  // Node arrays (structure of arrays keeps a complete tree's steps to two loads).
  std::vector<T> threshold_;
  std::vector<int32_t> feature_;      // kComplete: feature | missing-true flag in bit 31 (kComplete only, as threshold_)
  // kSparse: one node per visit (16 bytes for float: a random walk through a deep tree touches one
  // cache line per step, and the likelier child is the next node, usually on the same line).
  struct SparseNode {
    T threshold;
    int32_t feature;  // leaves: leaf id
    int32_t jump;     // absolute index of the child that is not the next node
    uint32_t flags;   // NodeMode (bits 0-3) | missing-goes-true (0x10) | next is the true child (0x20) | set << 8
  };
  std::vector<SparseNode> nodes_;
  std::vector<CompactNode> compact_;  // kSparse, when possible: the same nodes in 8 bytes (nodes_ then empty)
  std::vector<std::vector<T>> member_;  // kMember sets, sorted
  std::vector<int32_t> leaf_slot_;    // kComplete: leaf id of each bottom slot
  // Leaf weights (copied from the spec).
  std::vector<int32_t> leaf_begin_;
  std::vector<int32_t> weight_target_;
  std::vector<double> weight_value_;
  bool one_weight_per_leaf_ = false;
};

using Forest = BasicForest<float>;
using ForestF64 = BasicForest<double>;
extern template class BasicForest<float>;
extern template class BasicForest<double>;

// Reference: walks the spec directly, one row and one tree at a time (tests compare the layouts to it).
template <typename T>
void predict_reference(const ForestSpec& spec, const T* x, int64_t rows, int64_t stride, Aggregate agg, double* scores);

}  // namespace glassbox::kernels::trees
