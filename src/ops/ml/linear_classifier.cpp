// LinearClassifier (ai.onnx.ml 1-3): X [N, C] (or [C]) -> Y int64 labels [N], Z float [N, E].
// scores = X · coefficientsᵀ + intercepts over E = intercepts rows (coefficients [E, C]).
// E >= 2: Y = label of the first maximum score, Z = post_transform(scores).
// E == 1 with two labels (binary, as onnxruntime): Y = score > 0 ? labels[1] : labels[0],
// Z = [1 - p, p] with p = post_transform(score). String labels (classlabels_strings) give a
// string Y (ml::ClassLabels).
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct LinearClassifierAttrs {
  std::vector<float> coefficients;  // [E, C] row-major (required)
  std::vector<float> intercepts;    // one per class row E (required: it fixes E)
  std::vector<int64_t> labels;      // classlabels_ints (or indices of classlabels_strings): E labels, or 2 when E == 1
  std::vector<std::string> label_strings;  // classlabels_strings (Y is then a string tensor)
  ml::PostTransform post_transform = ml::PostTransform::kNone;
};

class LinearClassifierOp final : public Op {
 public:
  explicit LinearClassifierOp(LinearClassifierAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    const int64_t e = static_cast<int64_t>(a_.intercepts.size());
    if (m.cols * e != static_cast<int64_t>(a_.coefficients.size()))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "X has " + std::to_string(m.cols) + " columns; coefficients hold " +
                          std::to_string(a_.coefficients.size()) + " = classes (" + std::to_string(e) + ") x features");
    const int64_t width = e == 1 ? 2 : e;
    GB_ASSIGN_OR_RETURN(ml::LabelOutput y, ml::LabelOutput::begin(ctx, a_.label_strings, m.rows));
    GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat32, {m.rows, width}));
    int64_t* py = y.ids();
    float* pz = z->mutable_data<float>();
    ctx.pool().parallel_for(m.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, m.cols * e)), [&](int64_t b, int64_t end) {
      for (int64_t r = b; r < end; ++r) {
        float* out = pz + r * width;
        for (int64_t j = 0; j < e; ++j) {
          double s = a_.intercepts[j];
          const float* w = a_.coefficients.data() + j * m.cols;
          for (int64_t c = 0; c < m.cols; ++c) s += static_cast<double>(m.data[r * m.cols + c]) * w[c];
          out[j] = static_cast<float>(s);
        }
        if (e == 1) {
          const float s = out[0];
          py[r] = s > 0.f ? a_.labels[1] : a_.labels[0];
          const float p = a_.post_transform == ml::PostTransform::kLogistic ? ml::logistic(s) : s;
          out[0] = 1.f - p;
          out[1] = p;
          continue;
        }
        int64_t best = 0;
        for (int64_t j = 1; j < e; ++j) best = out[j] > out[best] ? j : best;
        py[r] = a_.labels[best];
        ml::transform_row(a_.post_transform, out, e);
      }
    });
    return y.finish(ctx);
  }

 private:
  LinearClassifierAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_LinearClassifier(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"classlabels_ints", "classlabels_strings", "coefficients", "intercepts",
                                              "multi_class", "post_transform"}));
  LinearClassifierAttrs a;
  GB_ASSIGN_OR_RETURN(a.coefficients, ml::attr_floats_or_empty(node, "coefficients"));
  GB_ASSIGN_OR_RETURN(a.intercepts, ml::attr_floats_or_empty(node, "intercepts"));
  GB_ASSIGN_OR_RETURN(ml::ClassLabels labels, ml::parse_class_labels(node, "classlabels_ints"));
  a.labels = std::move(labels.ids);
  a.label_strings = std::move(labels.strings);
  GB_ASSIGN_OR_RETURN(a.post_transform, ml::parse_post_transform(node));
  GB_ASSIGN_OR_RETURN(int64_t multi_class, attr_int(node, "multi_class", 0));
  (void)multi_class;  // documented as unused by the spec's reference; scores do not depend on it
  if (a.post_transform == ml::PostTransform::kProbit) return ml::refuse_probit();
  const size_t e = a.intercepts.size();
  if (e == 0) return ml::bad_attr("intercepts is empty: it gives the number of classes (one per coefficient row)");
  if (a.coefficients.empty() || a.coefficients.size() % e != 0)
    return ml::bad_attr("coefficients has " + std::to_string(a.coefficients.size()) +
                        " entries, not a non-empty multiple of the " + std::to_string(e) + " intercepts");
  if (!(a.labels.size() == e && e >= 2) && !(e == 1 && a.labels.size() == 2))
    return ml::bad_attr("classlabels_ints/strings has " + std::to_string(a.labels.size()) + " labels for " + std::to_string(e) +
                        " score rows (need one label per row, or 2 labels for one row)");
  if (e == 1 && a.post_transform != ml::PostTransform::kNone && a.post_transform != ml::PostTransform::kLogistic)
    return unsupported_attr("post_transform", "one score row supports NONE or LOGISTIC");
  return std::unique_ptr<Op>(new LinearClassifierOp(std::move(a)));
}

}  // namespace glassbox::ops
