// Where: output = condition ? X : Y with three-way multidirectional broadcasting.
#include <array>

#include "ops/binary.h"

namespace glassbox::ops {
namespace {

class WhereOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* c, require_input(ctx, 0, "condition"));
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 1, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* y, require_input(ctx, 2, "Y"));
    if (c->dtype() != DataType::kBool)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("condition must be bool, got ") + dtype_name(c->dtype()));
    GB_RETURN_IF_ERROR(same_dtype(ctx, *x, *y));
    const std::array<Shape, 3> shapes{c->shape(), x->shape(), y->shape()};
    GB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(shapes));
    return dispatch_dtype<AllTypes>(x->dtype(), "Where", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), shape));
      parallel_ternary<bool, T, T, T>(ctx.pool(), *c, *x, *y, *out, [](bool k, T a, T b) { return k ? a : b; });
      return {};
    });
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Where(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new WhereOp());
}

}  // namespace glassbox::ops
