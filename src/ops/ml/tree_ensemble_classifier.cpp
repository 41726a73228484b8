// TreeEnsembleClassifier (ai.onnx.ml 1-3): X [N, C] (or [C]) -> Y int64 labels [N],
// Z float scores [N, classes]. Class scores are sums of leaf weights (+ base_values).
// The spec leaves the two-class cases open; we follow onnxruntime, the de-facto
// reference that exporters test against:
//  - more than 2 classes: Z = post_transform(scores), Y = label of the first maximum
//    among classes that have weights (or base values).
//  - 2 classes, weights on class 0 only (XGBoost, scikit-learn exporters: the one score
//    is the positive class's): s = score + base_values[0]; all weights >= 0:
//    Y = s > 0.5, Z = [1 - s, s]; mixed signs: Y = s > 0, Z = LOGISTIC ? [σ(-s), σ(s)] : [-s, s].
//  - 2 classes, class 1 has weights: Z = post_transform([s0, s1]) (s0 = 0 when class 0 has no
//    weights); Y = s1 > 0.5 (only class 1 weighted, all weights >= 0), else s1 > 0.
// Combinations where onnxruntime's result is not a coherent reading of the spec (two
// base values for two classes, SOFTMAX on one score, PROBIT) are refused at load.
// String labels (classlabels_strings): computed as indices 0..K-1, Y is a string tensor.
#include <cmath>

#include "ops/ml/tree_ensemble_common.h"

namespace glassbox::ops {
namespace {

using kernels::trees::Aggregate;

enum class BinaryForm { kMulticlass, kOneScorePositive, kOneScoreMixed, kTwoColumns };

struct TreeEnsembleClassifierAttrs {
  std::vector<int64_t> labels;      // classlabels_int64s, or indices of classlabels_strings (ml::ClassLabels)
  std::vector<std::string> label_strings;  // classlabels_strings (Y is then a string tensor)
  std::vector<float> base_values;   // added per class (size 0 or classes; binary: 0 or 1)
  ml::PostTransform post_transform = ml::PostTransform::kNone;
  BinaryForm form = BinaryForm::kMulticlass;  // derived from the weights (see the file comment)
  float positive_threshold = 0.f;   // kTwoColumns: Y = s1 > this (0.5 when only class 1 has weights, all >= 0)
  std::vector<bool> has_score;      // per class: weights or a base value make it eligible for Y
};

class TreeEnsembleClassifierOp final : public Op {
 public:
  TreeEnsembleClassifierOp(TreeEnsembleClassifierAttrs a, const kernels::trees::ForestSpec& spec)
      : a_(std::move(a)), runner_(spec) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    const int64_t k = static_cast<int64_t>(a_.labels.size());
    GB_ASSIGN_OR_RETURN(ml::LabelOutput y, ml::LabelOutput::begin(ctx, a_.label_strings, m.rows));
    GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat32, {m.rows, k}));
    std::vector<double> scores;
    GB_RETURN_IF_ERROR(runner_.run(ctx, m, Aggregate::kSum, scores));
    int64_t* py = y.ids();
    float* pz = z->mutable_data<float>();
    for (int64_t r = 0; r < m.rows; ++r) py[r] = finish_row(scores.data() + r * k, pz + r * k);
    return y.finish(ctx);
  }

  std::string load_decision() const override { return "tree layout: " + runner_.forest().describe(); }

 private:
  // Writes the row's k scores to z and returns its label.
  int64_t finish_row(const double* s, float* z) const {
    const int64_t k = static_cast<int64_t>(a_.labels.size());
    const auto& L = a_.labels;
    switch (a_.form) {
      case BinaryForm::kMulticlass: {
        int64_t best = -1;
        for (int64_t c = 0; c < k; ++c) {
          z[c] = static_cast<float>(s[c] + (c < static_cast<int64_t>(a_.base_values.size()) ? a_.base_values[c] : 0.f));
          if (a_.has_score[c] && (best < 0 || z[c] > z[best])) best = c;
        }
        ml::transform_row(a_.post_transform, z, k);
        return L[best];
      }
      case BinaryForm::kOneScorePositive:
      case BinaryForm::kOneScoreMixed: {
        const float v = static_cast<float>(s[0] + s[1] + (a_.base_values.empty() ? 0.f : a_.base_values[0]));
        if (a_.form == BinaryForm::kOneScorePositive) {
          z[0] = 1.f - v;
          z[1] = v;
          return v > 0.5f ? L[1] : L[0];
        }
        const bool logistic = a_.post_transform == ml::PostTransform::kLogistic;
        z[0] = logistic ? ml::logistic(-v) : -v;
        z[1] = logistic ? ml::logistic(v) : v;
        return v > 0.f ? L[1] : L[0];
      }
      case BinaryForm::kTwoColumns: {
        z[0] = static_cast<float>(s[0]);
        z[1] = static_cast<float>(s[1]);
        const bool positive = z[1] > a_.positive_threshold;
        ml::transform_row(a_.post_transform, z, 2);
        return positive ? L[1] : L[0];
      }
    }
    return L[0];
  }

  TreeEnsembleClassifierAttrs a_;
  ml::ForestRunner runner_;
};

Status derive_form(TreeEnsembleClassifierAttrs& a, const ml::ParsedForest& pf) {
  const size_t k = a.labels.size();
  a.has_score = pf.target_has_weights;
  for (size_t c = 0; c < a.base_values.size() && c < k; ++c) a.has_score[c] = true;
  bool any = false;
  for (bool h : a.has_score) any = any || h;
  if (!any) return ml::bad_attr("no class has a weight or base value: every label would be undefined");
  if (k > 2) {
    if (!a.base_values.empty() && a.base_values.size() != k)
      return ml::bad_attr("base_values has " + std::to_string(a.base_values.size()) + " entries for " +
                          std::to_string(k) + " classes (it must be empty or one per class)");
    a.form = BinaryForm::kMulticlass;
    return {};
  }
  if (a.base_values.size() > 1)
    return unsupported_attr("base_values", "two classes with " + std::to_string(a.base_values.size()) +
                                               " base values: runtimes disagree on what that means; use 0 or 1");
  const bool w0 = pf.target_has_weights[0], w1 = pf.target_has_weights[1];
  bool positive = true;
  for (float v : pf.spec.weight_value) positive = positive && v >= 0.f;
  if (w1) {
    if (!a.base_values.empty())
      return unsupported_attr("base_values", "two classes with class 1 weighted: onnxruntime ignores base_values "
                                             "there; put the score on class 0 or fold the base into the leaves");
    if (w0 && !(a.labels[0] == 0 && a.labels[1] == 1))
      return unsupported_attr("classlabels_int64s", "both classes weighted: onnxruntime answers 0/1, not the labels, "
                                                    "for this form; use labels [0, 1]");
    a.form = BinaryForm::kTwoColumns;
    a.positive_threshold = !w0 && positive ? 0.5f : 0.f;
    return {};
  }
  if (a.post_transform != ml::PostTransform::kNone && a.post_transform != ml::PostTransform::kLogistic)
    return unsupported_attr("post_transform", "only NONE or LOGISTIC are defined for two classes scored by one weight");
  a.form = positive ? BinaryForm::kOneScorePositive : BinaryForm::kOneScoreMixed;
  return {};
}

}  // namespace

Result<std::unique_ptr<Op>> create_ml_TreeEnsembleClassifier(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(
      node, {"base_values", "base_values_as_tensor", "class_ids", "class_nodeids", "class_treeids", "class_weights",
             "class_weights_as_tensor", "classlabels_int64s", "classlabels_strings", "nodes_falsenodeids",
             "nodes_featureids", "nodes_hitrates", "nodes_hitrates_as_tensor", "nodes_missing_value_tracks_true",
             "nodes_modes", "nodes_nodeids", "nodes_treeids", "nodes_truenodeids", "nodes_values",
             "nodes_values_as_tensor", "post_transform"}));
  GB_RETURN_IF_ERROR(ml::refuse_present(node, {"base_values_as_tensor", "class_weights_as_tensor"},
                                        "double-precision values are not supported; export float attributes"));
  TreeEnsembleClassifierAttrs a;
  GB_ASSIGN_OR_RETURN(ml::ClassLabels labels, ml::parse_class_labels(node, "classlabels_int64s"));
  a.labels = std::move(labels.ids);
  a.label_strings = std::move(labels.strings);
  if (a.labels.size() < 2) return ml::bad_attr("classlabels_int64s (or classlabels_strings) must list at least 2 classes");
  GB_ASSIGN_OR_RETURN(a.base_values, ml::attr_floats_or_empty(node, "base_values"));
  GB_ASSIGN_OR_RETURN(a.post_transform, ml::parse_post_transform(node));
  if (a.post_transform == ml::PostTransform::kProbit) return ml::refuse_probit();
  GB_ASSIGN_OR_RETURN(ml::ParsedForest pf, ml::parse_forest(node, "class", static_cast<int64_t>(a.labels.size()),
                                                            /*same_classes_per_tree=*/true));
  GB_RETURN_IF_ERROR(derive_form(a, pf));
  return std::unique_ptr<Op>(new TreeEnsembleClassifierOp(std::move(a), pf.spec));
}

}  // namespace glassbox::ops
