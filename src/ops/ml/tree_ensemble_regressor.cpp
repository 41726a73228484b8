// TreeEnsembleRegressor (ai.onnx.ml 1-3): X [N, C] (or [C]) -> Y float [N, n_targets].
// Each row's leaf weights are aggregated per target (SUM, AVERAGE = SUM / trees, MIN,
// MAX; a target no leaf reached is 0), base_values are added, then post_transform
// (NONE; LOGISTIC/SOFTMAX/SOFTMAX_ZERO for two or more targets, as onnxruntime applies
// them; one target accepts NONE only, PROBIT is refused).
#include <cmath>

#include "ops/ml/tree_ensemble_common.h"

namespace glassbox::ops {
namespace {

using kernels::trees::Aggregate;

struct TreeEnsembleRegressorAttrs {
  int64_t n_targets = 1;             // width of Y (required by the spec; default 1 as onnxruntime)
  Aggregate aggregate = Aggregate::kSum;  // aggregate_function: SUM | AVERAGE | MIN | MAX (default SUM)
  bool average = false;              // AVERAGE: SUM divided by the number of trees
  std::vector<float> base_values;    // added per target (size 0 or n_targets)
  ml::PostTransform post_transform = ml::PostTransform::kNone;
};

class TreeEnsembleRegressorOp final : public Op {
 public:
  TreeEnsembleRegressorOp(TreeEnsembleRegressorAttrs a, const kernels::trees::ForestSpec& spec)
      : a_(std::move(a)), runner_(spec) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    const int64_t k = a_.n_targets;
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {m.rows, k}));
    std::vector<double> scores;
    GB_RETURN_IF_ERROR(runner_.run(ctx, m, a_.aggregate, scores));
    const double trees = static_cast<double>(runner_.forest().num_trees());
    float* py = y->mutable_data<float>();
    for (int64_t r = 0; r < m.rows; ++r) {
      float* out = py + r * k;
      for (int64_t t = 0; t < k; ++t) {
        double s = scores[r * k + t];
        if (std::isinf(s) && a_.aggregate != Aggregate::kSum) s = 0.0;  // no leaf reached this target
        if (a_.average) s /= trees;
        if (!a_.base_values.empty()) s += a_.base_values[t];
        out[t] = static_cast<float>(s);
      }
      if (k >= 2) ml::transform_row(a_.post_transform, out, k);
    }
    return {};
  }

  std::string load_decision() const override { return "tree layout: " + runner_.forest().describe(); }

 private:
  TreeEnsembleRegressorAttrs a_;
  ml::ForestRunner runner_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_TreeEnsembleRegressor(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(
      node, {"aggregate_function", "base_values", "base_values_as_tensor", "n_targets", "nodes_falsenodeids",
             "nodes_featureids", "nodes_hitrates", "nodes_hitrates_as_tensor", "nodes_missing_value_tracks_true",
             "nodes_modes", "nodes_nodeids", "nodes_treeids", "nodes_truenodeids", "nodes_values",
             "nodes_values_as_tensor", "post_transform", "target_ids", "target_nodeids", "target_treeids",
             "target_weights", "target_weights_as_tensor"}));
  GB_RETURN_IF_ERROR(ml::refuse_present(node, {"base_values_as_tensor", "target_weights_as_tensor"},
                                        "double-precision values are not supported; export float attributes"));
  TreeEnsembleRegressorAttrs a;
  GB_ASSIGN_OR_RETURN(a.n_targets, attr_int(node, "n_targets", a.n_targets));
  GB_ASSIGN_OR_RETURN(std::string agg, attr_string(node, "aggregate_function", "SUM"));
  if (agg == "SUM") a.aggregate = Aggregate::kSum;
  else if (agg == "AVERAGE") a.average = true;
  else if (agg == "MIN") a.aggregate = Aggregate::kMin;
  else if (agg == "MAX") a.aggregate = Aggregate::kMax;
  else return ml::bad_attr("aggregate_function '" + agg + "' is not one of SUM, AVERAGE, MIN, MAX");
  GB_ASSIGN_OR_RETURN(a.base_values, ml::attr_floats_or_empty(node, "base_values"));
  if (!a.base_values.empty() && static_cast<int64_t>(a.base_values.size()) != a.n_targets)
    return ml::bad_attr("base_values has " + std::to_string(a.base_values.size()) + " entries, n_targets is " +
                        std::to_string(a.n_targets) + " (it must be empty or one per target)");
  GB_ASSIGN_OR_RETURN(a.post_transform, ml::parse_post_transform(node));
  if (a.post_transform == ml::PostTransform::kProbit) return ml::refuse_probit();
  if (a.n_targets == 1 && a.post_transform != ml::PostTransform::kNone)
    return unsupported_attr("post_transform", "with one target only NONE is supported (onnxruntime ignores "
                                              "LOGISTIC/SOFTMAX for one target; the result would be ambiguous)");
  GB_ASSIGN_OR_RETURN(ml::ParsedForest pf, ml::parse_forest(node, "target", a.n_targets, /*same_classes_per_tree=*/false));
  return std::unique_ptr<Op>(new TreeEnsembleRegressorOp(std::move(a), pf.spec));
}

}  // namespace glassbox::ops
