// SpaceToDepth: [N, C, H, W] -> [N, C*b², H/b, W/b] (inverse of DepthToSpace DCR).
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct SpaceToDepthAttrs {
  int64_t blocksize = 0;  // b (required)
};

class SpaceToDepthOp final : public Op {
 public:
  explicit SpaceToDepthOp(SpaceToDepthAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t b = a_.blocksize;
    if (x->rank() != 4 || x->shape()[2] % b != 0 || x->shape()[3] % b != 0)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "input " + shape_to_string(x->shape()) + " must be 4-D with H and W divisible by " +
                                std::to_string(b));
    const int64_t n = x->shape()[0], c = x->shape()[1], h = x->shape()[2] / b, w = x->shape()[3] / b;
    const int64_t W = w * b, HW = h * b * W;
    // Output viewed as [N, b1, b2, C, H', W'] reading input [N, C, H', b1, W', b2].
    std::vector<int64_t> shape{n, b, b, c, h, w};
    std::vector<int64_t> strides{c * HW, W, 1, HW, b * W, b};
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), {n, c * b * b, h, w}));
    kernels::strided_copy(dtype_size(x->dtype()), 6, shape.data(), x->raw(), strides.data(), y->mutable_raw(),
                          &ctx.pool());
    return Status::ok_status();
  }

 private:
  SpaceToDepthAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_SpaceToDepth(const graph::Node& node, int64_t) {
  SpaceToDepthAttrs a;
  GB_ASSIGN_OR_RETURN(a.blocksize, attr_int_required(node, "blocksize"));
  if (a.blocksize < 1) return make_error(ErrorCode::kInvalidModel, "blocksize must be >= 1");
  return std::unique_ptr<Op>(new SpaceToDepthOp(a));
}

}  // namespace glassbox::ops
