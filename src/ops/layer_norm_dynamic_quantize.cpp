// glassbox::LayerNormDynamicQuantize (internal, made by the layer_norm_quantize_fusion pass):
// glassbox::LayerNorm(X, gamma, beta) followed by DynamicQuantizeLinear of its output, as one op.
// Outputs: Y (float32, what LayerNorm wrote: it still feeds the residual), Y_q (uint8), y_scale
// (float32 scalar), y_zero_point (uint8 scalar) — each equal bit for bit to the two ops' outputs
// (kernels::layer_norm_rows_quantize_u8 runs their arithmetic).
#include "kernels/layer_norm.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

class LayerNormDynamicQuantizeOp final : public Op {
 public:
  explicit LayerNormDynamicQuantizeOp(float eps) : eps_(eps) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* gamma, require_input(ctx, 1, "gamma"));
    GB_ASSIGN_OR_RETURN(const Tensor* beta, require_input(ctx, 2, "beta"));
    for (const Tensor* t : {x, gamma, beta})
      if (t->dtype() != DataType::kFloat32)
        return op_error(ctx, ErrorCode::kInternal, "LayerNormDynamicQuantize expects float32");
    if (x->rank() < 1 || gamma->numel() != x->shape().back() || beta->numel() != x->shape().back())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "LayerNormDynamicQuantize: gamma " + shape_to_string(gamma->shape()) + " / beta " +
                          shape_to_string(beta->shape()) + " do not match the last axis of " + shape_to_string(x->shape()));
    if (ctx.num_outputs() != 4)
      return op_error(ctx, ErrorCode::kInternal, "LayerNormDynamicQuantize needs its 4 outputs (Y, Y_q, scale, zero point)");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    GB_ASSIGN_OR_RETURN(Tensor * q, ctx.allocate_output(1, DataType::kUInt8, x->shape()));
    GB_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(2, DataType::kFloat32, {}));
    GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(3, DataType::kUInt8, {}));
    const int64_t cols = x->shape().back();
    const int64_t rows = cols == 0 ? 0 : x->numel() / cols;
    float scale = 1.f;
    int32_t zp = 0;
    kernels::layer_norm_rows_quantize_u8(rows, cols, x->data<float>(), gamma->data<float>(), beta->data<float>(), eps_,
                                         y->mutable_data<float>(), q->mutable_data<uint8_t>(), &scale, &zp, &ctx.pool());
    s->mutable_data<float>()[0] = scale;
    z->mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    return {};
  }

 private:
  float eps_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_LayerNormDynamicQuantize(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"epsilon"}));
  GB_ASSIGN_OR_RETURN(float eps, attr_float(node, "epsilon", 1e-5f));
  return std::unique_ptr<Op>(new LayerNormDynamicQuantizeOp(eps));
}

}  // namespace glassbox::ops
