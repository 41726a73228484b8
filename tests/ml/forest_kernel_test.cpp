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
  expect_same(spec, f, 33, Aggregate::kSum, 4);
}

TEST(ForestKernel, LayoutsAgreeWhenCompleteIsSwitchedOff) {
  auto spec = random_spec(11, 8, 5, 5, 1, false, NodeMode::kGte);
  ForestLayoutOptions off;
  off.allow_complete = false;
  Forest sparse = Forest::build(spec, off), complete = Forest::build(spec);
  ASSERT_EQ(sparse.layout(), Layout::kSparse);
  ASSERT_EQ(complete.layout(), Layout::kComplete);
  for (Aggregate agg : {Aggregate::kSum, Aggregate::kMin, Aggregate::kMax}) {
    expect_same(spec, sparse, 20, agg, 5);
    expect_same(spec, complete, 20, agg, 5);
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
