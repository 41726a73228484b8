// LinearRegressor (ai.onnx.ml 1-3): X [N, C] (or [C]) -> Y float [N, targets],
// Y = X · coefficientsᵀ + intercepts, coefficients row-major [targets, C]. Sums in
// double (so the float32 result is the correctly rounded dot product; onnxruntime
// sums in float with its GEMM, which sets the parity floor). post_transform NONE only.
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct LinearRegressorAttrs {
  std::vector<float> coefficients;  // [targets, C] row-major (required)
  std::vector<float> intercepts;    // one per target (default: none, 0)
  int64_t targets = 1;              // width of Y
};

class LinearRegressorOp final : public Op {
 public:
  explicit LinearRegressorOp(LinearRegressorAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    const int64_t t = a_.targets;
    if (m.cols * t != static_cast<int64_t>(a_.coefficients.size()))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "X has " + std::to_string(m.cols) + " columns; coefficients hold " +
                          std::to_string(a_.coefficients.size()) + " = targets (" + std::to_string(t) + ") x features");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {m.rows, t}));
    float* py = y->mutable_data<float>();
    ctx.pool().parallel_for(m.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, m.cols * t)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        for (int64_t j = 0; j < t; ++j) {
          double s = a_.intercepts.empty() ? 0.0 : a_.intercepts[j];
          const float* w = a_.coefficients.data() + j * m.cols;
          const float* xr = m.data + r * m.cols;
          for (int64_t c = 0; c < m.cols; ++c) s += static_cast<double>(xr[c]) * w[c];
          py[r * t + j] = static_cast<float>(s);
        }
    });
    return {};
  }

 private:
  LinearRegressorAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_LinearRegressor(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"coefficients", "intercepts", "post_transform", "targets"}));
  LinearRegressorAttrs a;
  GB_ASSIGN_OR_RETURN(a.coefficients, ml::attr_floats_or_empty(node, "coefficients"));
  GB_ASSIGN_OR_RETURN(a.intercepts, ml::attr_floats_or_empty(node, "intercepts"));
  GB_ASSIGN_OR_RETURN(a.targets, attr_int(node, "targets", a.targets));
  GB_ASSIGN_OR_RETURN(ml::PostTransform pt, ml::parse_post_transform(node));
  if (pt != ml::PostTransform::kNone) return unsupported_attr("post_transform", "LinearRegressor supports NONE only");
  if (a.targets < 1) return ml::bad_attr("targets must be >= 1, got " + std::to_string(a.targets));
  if (a.coefficients.empty() || a.coefficients.size() % static_cast<size_t>(a.targets) != 0)
    return ml::bad_attr("coefficients has " + std::to_string(a.coefficients.size()) +
                        " entries, not a non-empty multiple of targets = " + std::to_string(a.targets));
  if (!a.intercepts.empty() && static_cast<int64_t>(a.intercepts.size()) != a.targets)
    return ml::bad_attr("intercepts has " + std::to_string(a.intercepts.size()) + " entries for " +
                        std::to_string(a.targets) + " targets");
  return std::unique_ptr<Op>(new LinearRegressorOp(std::move(a)));
}

}  // namespace glassbox::ops
