// glassbox::Gelu (internal, made by the gelu_fusion pass): y = 0.5 x (1 + erf(x / sqrt 2)), float32.
#include "kernels/layer_norm.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

class GeluOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->dtype() != DataType::kFloat32) return op_error(ctx, ErrorCode::kInternal, "Gelu expects float32");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    kernels::gelu_erf_f32(x->data<float>(), y->mutable_data<float>(), x->numel(), &ctx.pool());
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_Gelu(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new GeluOp());
}

}  // namespace glassbox::ops
