// PRelu: y = x < 0 ? slope * x : x; slope broadcasts unidirectionally to X
// (opset 7+), so the output has X's shape.
#include "ops/binary.h"

namespace glassbox::ops {
namespace {

using PReluTypes = TypeList<float, double, int32_t, int64_t>;

class PReluOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* slope, require_input(ctx, 1, "slope"));
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
};

}  // namespace

Result<std::unique_ptr<Op>> create_PRelu(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new PReluOp());
}

}  // namespace glassbox::ops
