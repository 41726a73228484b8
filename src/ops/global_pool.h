// GlobalAveragePool and GlobalMaxPool share one op: reduce every spatial dim of
// X [N, C, d1, ...] to 1 with the average or the max (float32).
#pragma once

#include "kernels/pool.h"
#include "ops/nn_args.h"

namespace glassbox::ops {

class GlobalPoolOp final : public Op {
 public:
  explicit GlobalPoolOp(bool max) : max_(max) {}
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
    kernels::global_pool_f32(x->shape()[0] * x->shape()[1], size, x->data<float>(), y->mutable_data<float>(), max_,
                             &ctx.pool());
    return Status::ok_status();
  }

 private:
  bool max_;
};

}  // namespace glassbox::ops
