// Shared by TreeEnsembleClassifier and TreeEnsembleRegressor: the nodes_* and
// leaf-weight attributes -> a validated kernels::trees::ForestSpec, and the
// batch-parallel evaluation into double scores.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/trees/forest.h"
#include "ops/ml/ml_common.h"

namespace glassbox::ops::ml {

struct ParsedForest {
  kernels::trees::ForestSpec spec;
  std::vector<bool> target_has_weights;  // per target/class: some leaf carries a weight for it
};

// Reads nodes_* and <prefix>_{ids,nodeids,treeids,weights} (prefix "target" or "class") and
// checks: equal array lengths, node ids 0..K-1 per tree, known modes, child ids in range,
// a tree (no node with two parents, root never a child: no cycles), weights only on leaves,
// target ids in [0, n_targets), and (for classifiers) one class set per tree's leaves.
Result<ParsedForest> parse_forest(const graph::Node& node, const std::string& prefix, int64_t n_targets,
                                  bool same_classes_per_tree);

// The built forest plus how to run it (T: float, or double for TreeEnsemble with double X).
template <typename T>
class BasicForestRunner {
 public:
  explicit BasicForestRunner(const kernels::trees::ForestSpec& spec)
      : forest_(kernels::trees::BasicForest<T>::build(spec)) {}
  const kernels::trees::BasicForest<T>& forest() const { return forest_; }
  // scores: rows x n_targets doubles, initialised for `agg` here; rows split over the pool
  // (or, for few rows, trees split over the pool with partial scores merged in order).
  Status run(ComputeContext& ctx, const T* x, int64_t rows, int64_t cols, kernels::trees::Aggregate agg,
             std::vector<double>& scores) const;
  Status run(ComputeContext& ctx, const FloatMatrix& x, kernels::trees::Aggregate agg, std::vector<double>& scores) const
    requires std::is_same_v<T, float>
  {
    return run(ctx, x.data, x.rows, x.cols, agg, scores);
  }

 private:
  kernels::trees::BasicForest<T> forest_;
};
using ForestRunner = BasicForestRunner<float>;

}  // namespace glassbox::ops::ml
