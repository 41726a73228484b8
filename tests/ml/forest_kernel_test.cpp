// The tree kernel's layouts against the reference walk of the spec.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/trees/forest.h"

namespace glassbox::kernels::trees {
namespace {

constexpr NodeMode kBranchModes[] = {NodeMode::kLeq, NodeMode::kLt, NodeMode::kGte,
                                     NodeMode::kGt,  NodeMode::kEq, NodeMode::kNeq};

// Random unbalanced trees on an integer threshold grid (so EQ/NEQ and ties are hit).
ForestSpec random_spec(uint32_t seed, int trees, int depth, int features, int targets, bool mixed, NodeMode mode) {
  std::mt19937 rng(seed);
  ForestSpec s;
  s.n_targets = targets;
  for (int t = 0; t < trees; ++t) {
    std::vector<TreeNode> tree(1);
    std::vector<std::pair<int32_t, int>> todo{{0, 0}};
    while (!todo.empty()) {
      auto [n, level] = todo.back();
      todo.pop_back();
      if (level == depth || (level > 1 && rng() % 4 == 0)) {
        tree[n].mode = NodeMode::kLeaf;
        tree[n].leaf = static_cast<int32_t>(s.leaf_begin.size());
        s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
        for (int k = 0; k < targets; ++k)
          if (targets == 1 || rng() % 3 != 0) {
            s.weight_target.push_back(k);
            s.weight_value.push_back(std::uniform_real_distribution<float>(-1, 1)(rng));
          }
        continue;
      }
      tree[n].mode = mixed ? kBranchModes[rng() % 6] : mode;
      tree[n].feature = static_cast<int32_t>(rng() % features);
      tree[n].threshold = static_cast<float>(static_cast<int>(rng() % 7) - 3);
      tree[n].missing_true = rng() % 2 == 0;
      tree[n].true_child = static_cast<int32_t>(tree.size());
      tree[n].false_child = static_cast<int32_t>(tree.size() + 1);
      tree.resize(tree.size() + 2);
      todo.push_back({tree[n].true_child, level + 1});
      todo.push_back({tree[n].false_child, level + 1});
    }
    s.trees.push_back(std::move(tree));
  }
  s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
  return s;
}

std::vector<float> random_rows(uint32_t seed, int64_t rows, int features) {
  std::mt19937 rng(seed);
  std::vector<float> x(static_cast<size_t>(rows * features));
  for (auto& v : x) {
    const int r = static_cast<int>(rng() % 10);
    v = r == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(static_cast<int>(rng() % 9) - 4) + (r == 1 ? 0.5f : 0.f);
  }
  return x;
}

void expect_same(const ForestSpec& spec, const Forest& f, int64_t rows, Aggregate agg, uint32_t seed) {
  const int features = 5;
  auto x = random_rows(seed, rows, features);
  const double init = agg == Aggregate::kSum ? 0.0 : agg == Aggregate::kMin ? INFINITY : -INFINITY;
  std::vector<double> want(static_cast<size_t>(rows * spec.n_targets), init), got = want;
  predict_reference(spec, x.data(), rows, features, agg, want.data());
  f.predict(x.data(), rows, features, 0, f.num_trees(), agg, got.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << f.describe() << " element " << i;
}

TEST(ForestKernel, CompleteLayoutEveryModeMatchesReference) {
  for (NodeMode m : kBranchModes) {
    auto spec = random_spec(1 + static_cast<int>(m), 9, 6, 5, 2, false, m);
    Forest f = Forest::build(spec);
    ASSERT_EQ(f.layout(), Layout::kComplete) << f.describe();
    for (int64_t rows : {1, 7, 8, 65, 130}) expect_same(spec, f, rows, Aggregate::kSum, 10 + static_cast<uint32_t>(rows));
  }
}

TEST(ForestKernel, SparseLayoutMixedModesMatchesReference) {
  auto spec = random_spec(7, 11, 7, 5, 3, true, NodeMode::kLeq);
  Forest f = Forest::build(spec);
  ASSERT_EQ(f.layout(), Layout::kSparse) << f.describe();
  for (Aggregate agg : {Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) expect_same(spec, f, 67, agg, 3);
}

TEST(ForestKernel, DeepTreesFallBackToSparse) {
  auto spec = random_spec(9, 3, 20, 5, 1, false, NodeMode::kLt);
  ForestLayoutOptions o;
  o.max_complete_depth = 12;
  Forest f = Forest::build(spec, o);
  EXPECT_EQ(f.layout(), Layout::kSparse) << f.describe();
  EXPECT_NE(f.describe().find("8-byte nodes"), std::string::npos) << f.describe();  // one mode (LT), float
  expect_same(spec, f, 33, Aggregate::kSum, 4);
  ForestF64 d = ForestF64::build(spec, o);  // double thresholds: 16-byte nodes
  EXPECT_EQ(d.describe().find("8-byte nodes"), std::string::npos) << d.describe();
}

TEST(ForestKernel, LayoutsAgreeWhenCompleteIsSwitchedOff) {
  auto spec = random_spec(11, 8, 5, 5, 1, false, NodeMode::kGte);
  ForestLayoutOptions off;
  off.allow_complete = false;
  Forest sparse = Forest::build(spec, off), complete = Forest::build(spec);
  auto leq = random_spec(12, 8, 5, 5, 1, false, NodeMode::kLeq);
  Forest sparse_leq = Forest::build(leq, off);  // 8-byte nodes, LEQ
  for (int64_t rows : {3, 8, 9, 100}) expect_same(leq, sparse_leq, rows, Aggregate::kSum, 30 + static_cast<uint32_t>(rows));
  ASSERT_EQ(sparse.layout(), Layout::kSparse);
  ASSERT_EQ(complete.layout(), Layout::kComplete);
  for (Aggregate agg : {Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) {
    expect_same(spec, sparse, 20, agg, 5);
    expect_same(spec, complete, 20, agg, 5);
  }
}

// Some branch nodes of a random spec become set-membership nodes (sets on the input grid, half
// values too, as the rows have them), some get hit rates (they reorder the sparse layout only).
ForestSpec with_members_and_hitrates(ForestSpec s, uint32_t seed) {
  std::mt19937 rng(seed);
  for (auto& tree : s.trees)
    for (auto& n : tree) {
      if (rng() % 2 == 0) n.hitrate = static_cast<double>(rng() % 100);
      if (n.mode == NodeMode::kLeaf || rng() % 3 != 0) continue;
      n.mode = NodeMode::kMember;
      n.member_set = static_cast<int32_t>(s.member_sets.size());
      std::vector<double> set;
      for (int k = 0, m = 1 + static_cast<int>(rng() % 4); k < m; ++k)
        set.push_back(static_cast<double>(static_cast<int>(rng() % 9) - 4) + (rng() % 3 == 0 ? 0.5 : 0.0));
      s.member_sets.push_back(set);
    }
  return s;
}

TEST(ForestKernel, SetMembershipAndHitRatesMatchReferenceFloatAndDouble) {
  for (bool mixed : {false, true}) {
    auto spec = with_members_and_hitrates(random_spec(17 + mixed, 9, 8, 5, 2, mixed, NodeMode::kLeq), 3 + mixed);
    Forest f = Forest::build(spec);
    ASSERT_EQ(f.layout(), Layout::kSparse) << f.describe();
    EXPECT_NE(f.describe().find("nodes_hitrates"), std::string::npos) << f.describe();
    for (int64_t rows : {1, 9, 70}) expect_same(spec, f, rows, Aggregate::kSum, 20 + static_cast<uint32_t>(rows));
    ForestF64 d = ForestF64::build(spec);
    for (Aggregate agg : {Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) {
      const int64_t rows = 41;
      auto xf = random_rows(8, rows, 5);
      std::vector<double> x(xf.begin(), xf.end());
      const double init = agg == Aggregate::kSum ? 0.0 : agg == Aggregate::kMin ? INFINITY : -INFINITY;
      std::vector<double> want(static_cast<size_t>(rows * spec.n_targets), init), got = want;
      predict_reference(spec, x.data(), rows, 5, agg, want.data());
      d.predict(x.data(), rows, 5, 0, d.num_trees(), agg, got.data());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << d.describe() << " element " << i;
    }
  }
}

TEST(ForestKernel, SparseLayoutPutsTheLargerSubtreeNext) {
  // root: true child a leaf, false child a 3-node subtree; and the mirror image. Both must match the
  // reference (the layout stores the other child, whichever side it is).
  for (bool big_true : {false, true}) {
    ForestSpec s;
    s.trees.push_back(std::vector<TreeNode>(5));
    auto& t = s.trees[0];
    t[0] = TreeNode{NodeMode::kLeq, false, 0, 0.0, -1, -1.0, big_true ? 2 : 1, big_true ? 1 : 2, -1};
    t[2] = TreeNode{NodeMode::kLt, true, 1, 1.0, -1, -1.0, 3, 4, -1};
    for (int n : {1, 3, 4}) {
      t[n].leaf = static_cast<int32_t>(s.leaf_begin.size());
      s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
      s.weight_target.push_back(0);
      s.weight_value.push_back(n);
    }
    s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
    ForestLayoutOptions off;
    off.allow_complete = false;
    Forest f = Forest::build(s, off);
    EXPECT_NE(f.describe().find("subtree size"), std::string::npos) << f.describe();
    expect_same(s, f, 30, Aggregate::kSum, 12);
  }
}

TEST(ForestKernel, TreeRangesSplitTheSum) {
  auto spec = random_spec(13, 10, 4, 5, 1, false, NodeMode::kLeq);
  Forest f = Forest::build(spec);
  auto x = random_rows(6, 4, 5);
  std::vector<double> all(4, 0.0), a(4, 0.0), b(4, 0.0);
  f.predict(x.data(), 4, 5, 0, 10, Aggregate::kSum, all.data());
  f.predict(x.data(), 4, 5, 0, 3, Aggregate::kSum, a.data());
  f.predict(x.data(), 4, 5, 3, 10, Aggregate::kSum, b.data());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(all[i], a[i] + b[i], 1e-12);
}

}  // namespace
}  // namespace glassbox::kernels::trees
