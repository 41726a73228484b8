// PRelu: y = x < 0 ? slope * x : x; slope broadcasts unidirectionally to X
// (opset 7+), so the output has X's shape. PRelu-6 applied a 1-D slope of size C
// per channel (dim 1 of X); that case becomes a [C, 1, ..., 1] view.
#include "ops/binary.h"

namespace glassbox::ops {
namespace {

using PReluTypes = TypeList<float, double, int32_t, int64_t>;

class PReluOp final : public Op {
 public:
  explicit PReluOp(bool per_channel_1d) : per_channel_1d_(per_channel_1d) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* slope, require_input(ctx, 1, "slope"));
    Tensor slope_view;
    if (per_channel_1d_ && slope->rank() == 1 && x->rank() >= 2 && slope->shape()[0] == x->shape()[1] &&
        slope->shape()[0] != 1) {
      Shape view(static_cast<size_t>(x->rank() - 1), 1);
      view[0] = slope->shape()[0];
      GB_ASSIGN_OR_RETURN(slope_view, slope->reshaped(view));
      slope = &slope_view;
    }
    GB_RETURN_IF_ERROR(same_dtype(ctx, *x, *slope));
    GB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(x->shape(), slope->shape()));
    if (shape != x->shape())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "slope shape " + shape_to_string(slope->shape()) + " does not broadcast to X shape " +
                          shape_to_string(x->shape()));
    return dispatch_dtype<PReluTypes>(x->dtype(), "PRelu", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
      parallel_binary<T, T, T>(ctx.pool(), *x, *slope, *y,
                               [](T v, T s) { return v < 0 ? static_cast<T>(s * v) : v; });
      return {};
    });
  }

 private:
  bool per_channel_1d_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_PRelu(const graph::Node& node, int64_t opset) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new PReluOp(opset < 7));
}

}  // namespace glassbox::ops
