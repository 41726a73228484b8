// GlobalMaxPool (float32): max over all spatial dims -> [N, C, 1, ...].
#include "kernels/pool.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class GlobalMaxPoolOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    if (x->rank() < 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "input " + shape_to_string(x->shape()) + " needs rank >= 2");
    Shape out = x->shape();
    int64_t size = 1;
    for (size_t i = 2; i < out.size(); ++i) {
      size *= out[i];
      out[i] = 1;
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, out));
    kernels::global_pool_f32(x->shape()[0] * x->shape()[1], size, x->data<float>(), y->mutable_data<float>(),
                             true, &ctx.pool());
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_GlobalMaxPool(const graph::Node&, int64_t) {
  return std::unique_ptr<Op>(new GlobalMaxPoolOp());
}

}  // namespace glassbox::ops
