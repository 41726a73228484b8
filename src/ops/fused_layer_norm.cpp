// glassbox::LayerNorm (internal, made by the layer_norm_fusion pass): LayerNorm over the
// last axis, y = (x - mean) / sqrt(var + epsilon) * gamma + beta; gamma/beta [C], float32.
#include "kernels/layer_norm.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

class FusedLayerNormOp final : public Op {
 public:
  explicit FusedLayerNormOp(float eps) : eps_(eps) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* gamma, require_input(ctx, 1, "gamma"));
    GB_ASSIGN_OR_RETURN(const Tensor* beta, require_input(ctx, 2, "beta"));
    for (const Tensor* t : {x, gamma, beta})
      if (t->dtype() != DataType::kFloat32) return op_error(ctx, ErrorCode::kInternal, "LayerNorm expects float32");
    if (x->rank() < 1 || gamma->numel() != x->shape().back() || beta->numel() != x->shape().back())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "LayerNorm: gamma " + shape_to_string(gamma->shape()) + " / beta " + shape_to_string(beta->shape()) +
                          " do not match the last axis of " + shape_to_string(x->shape()));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    const int64_t cols = x->shape().back();
    if (cols == 0) return {};
    kernels::layer_norm_rows_f32(x->numel() / cols, cols, x->data<float>(), gamma->data<float>(), beta->data<float>(), eps_,
                                 y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  float eps_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_LayerNorm(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"epsilon"}));
  GB_ASSIGN_OR_RETURN(float eps, attr_float(node, "epsilon", 1e-5f));
  return std::unique_ptr<Op>(new FusedLayerNormOp(eps));
}

}  // namespace glassbox::ops
