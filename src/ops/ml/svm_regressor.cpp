// SVMRegressor (ai.onnx.ml 1-3): Y float [N, 1] = sum_v coefficients[v] K(x, sv_v) + rho[0]
// over n_supports support vectors (libsvm SVR / one-class), or x · coefficients + rho[0]
// when n_supports = 0 (linear). one_class = 1 outputs the sign (1 or -1) instead.
#include "ops/ml/svm_common.h"

namespace glassbox::ops {
namespace {

struct SVMRegressorAttrs {
  ml::SvmKernelParams kernel;          // kernel_type, kernel_params
  int64_t n_supports = 0;              // support vectors; 0: linear mode
  std::vector<float> support_vectors;  // [n_supports, F] row-major
  std::vector<float> coefficients;     // one per support vector (or per feature in linear mode)
  float rho = 0.f;                     // rho[0], the offset (required)
  bool one_class = false;              // output sign(score) as 1 / -1
};

class SVMRegressorOp final : public Op {
 public:
  explicit SVMRegressorOp(SVMRegressorAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    const int64_t f = a_.n_supports > 0 ? static_cast<int64_t>(a_.support_vectors.size()) / a_.n_supports
                                        : static_cast<int64_t>(a_.coefficients.size());
    if (m.cols != f)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "X has " + std::to_string(m.cols) + " columns, the model has " + std::to_string(f) + " features");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {m.rows, 1}));
    float* py = y->mutable_data<float>();
    ctx.pool().parallel_for(m.rows, 16, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* xr = m.data + r * f;
        double s = a_.rho;
        if (a_.n_supports == 0) {
          for (int64_t c = 0; c < f; ++c) s += static_cast<double>(xr[c]) * a_.coefficients[c];
        } else {
          for (int64_t v = 0; v < a_.n_supports; ++v)
            s += static_cast<double>(a_.coefficients[v]) * ml::svm_kernel(a_.kernel, xr, a_.support_vectors.data() + v * f, f);
        }
        py[r] = a_.one_class ? (s > 0 ? 1.f : -1.f) : static_cast<float>(s);
      }
    });
    return {};
  }

 private:
  SVMRegressorAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_SVMRegressor(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"coefficients", "kernel_params", "kernel_type", "n_supports", "one_class",
                                              "post_transform", "rho", "support_vectors"}));
  SVMRegressorAttrs a;
  GB_ASSIGN_OR_RETURN(a.kernel, ml::parse_svm_kernel(node));
  GB_ASSIGN_OR_RETURN(a.n_supports, attr_int(node, "n_supports", 0));
  GB_ASSIGN_OR_RETURN(a.support_vectors, ml::attr_floats_or_empty(node, "support_vectors"));
  GB_ASSIGN_OR_RETURN(a.coefficients, ml::attr_floats_or_empty(node, "coefficients"));
  GB_ASSIGN_OR_RETURN(auto rho, ml::attr_floats_or_empty(node, "rho"));
  GB_ASSIGN_OR_RETURN(int64_t one_class, attr_int(node, "one_class", 0));
  GB_ASSIGN_OR_RETURN(ml::PostTransform pt, ml::parse_post_transform(node));
  if (pt != ml::PostTransform::kNone) return unsupported_attr("post_transform", "SVMRegressor supports NONE only");
  if (rho.size() != 1) return ml::bad_attr("rho has " + std::to_string(rho.size()) + " entries, expected 1");
  a.rho = rho[0];
  a.one_class = one_class != 0;
  if (a.n_supports < 0) return ml::bad_attr("n_supports is negative");
  if (a.coefficients.empty()) return ml::bad_attr("coefficients is empty");
  if (a.n_supports > 0) {
    if (static_cast<int64_t>(a.coefficients.size()) != a.n_supports)
      return ml::bad_attr("coefficients has " + std::to_string(a.coefficients.size()) + " entries for " +
                          std::to_string(a.n_supports) + " support vectors");
    if (a.support_vectors.empty() || a.support_vectors.size() % static_cast<size_t>(a.n_supports) != 0)
      return ml::bad_attr("support_vectors has " + std::to_string(a.support_vectors.size()) +
                          " entries, not a non-empty multiple of n_supports = " + std::to_string(a.n_supports));
  } else if (a.kernel.kernel != ml::SvmKernel::kLinear) {
    return ml::bad_attr("n_supports = 0 (linear mode) with a non-LINEAR kernel_type");
  }
  return std::unique_ptr<Op>(new SVMRegressorOp(std::move(a)));
}

}  // namespace glassbox::ops
