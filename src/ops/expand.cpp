// Expand: broadcasts the input to `shape` (numpy rules, both directions).
#include <algorithm>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class ExpandOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* st, nn::need_input(ctx, 1, "shape"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, nn::read_ints(ctx, *st, "shape"));
    const int64_t r = std::max<int64_t>(x->rank(), static_cast<int64_t>(shape.size()));
    Shape out(static_cast<size_t>(r));
    std::vector<int64_t> strides(static_cast<size_t>(r), 0);
    int64_t s = 1;
    for (int64_t i = r - 1; i >= 0; --i) {
      const int64_t xi = i - (r - x->rank()), si = i - (r - static_cast<int64_t>(shape.size()));
      const int64_t xd = xi >= 0 ? x->shape()[xi] : 1, sd = si >= 0 ? shape[si] : 1;
      if (sd < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "shape has a negative dim");
      if (xd != sd && xd != 1 && sd != 1)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "input " + shape_to_string(x->shape()) + " cannot be broadcast to " +
                                  shape_to_string(shape));
      out[i] = xd == 1 ? sd : xd;
      strides[i] = xd == 1 ? 0 : s;
      s *= xd;
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    kernels::strided_copy(dtype_size(x->dtype()), static_cast<int>(r), out.data(), x->raw(), strides.data(),
                          y->mutable_raw(), &ctx.pool());
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Expand(const graph::Node&, int64_t) { return std::unique_ptr<Op>(new ExpandOp()); }

}  // namespace glassbox::ops
