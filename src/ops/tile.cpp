// Tile (opset 6+): repeats the input `repeats[d]` times along each dim. One
// strided copy over interleaved (repeat, dim) axes; the memory cap stops bombs.
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class TileOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* rt, nn::need_input(ctx, 1, "repeats"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> rep, nn::read_ints(ctx, *rt, "repeats"));
    const int64_t r = x->rank();
    if (static_cast<int64_t>(rep.size()) != r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "repeats has " + std::to_string(rep.size()) + " entries for input rank " + std::to_string(r));
    Shape out(static_cast<size_t>(r));
    std::vector<int64_t> shape2, strides2;
    int64_t s = 1;
    std::vector<int64_t> in_strides(static_cast<size_t>(r));
    for (int64_t d = r - 1; d >= 0; --d) {
      in_strides[d] = s;
      s *= x->shape()[d];
    }
    for (int64_t d = 0; d < r; ++d) {
      if (rep[d] < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "repeats has a negative entry");
      if (__builtin_mul_overflow(x->shape()[d], rep[d], &out[d]))
        return nn::node_error(ctx, ErrorCode::kLimitExceeded, "tiled shape overflows int64");
      shape2.push_back(rep[d]);
      strides2.push_back(0);
      shape2.push_back(x->shape()[d]);
      strides2.push_back(in_strides[d]);
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    kernels::strided_copy(dtype_size(x->dtype()), static_cast<int>(2 * r), shape2.data(), x->raw(), strides2.data(),
                          y->mutable_raw(), &ctx.pool());
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Tile(const graph::Node&, int64_t) { return std::unique_ptr<Op>(new TileOp()); }

}  // namespace glassbox::ops
