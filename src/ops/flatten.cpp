// Flatten: [d0..d(axis-1)] x [d(axis)..] as a 2-D view of the input.
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct FlattenAttrs {
  int64_t axis = 1;  // dims before it form the outer dim; may be negative (opset 11), range [-r, r]
};

class FlattenOp final : public Op {
 public:
  explicit FlattenOp(FlattenAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    const int64_t r = x->rank();
    int64_t axis = a_.axis;
    if (axis < -r || axis > r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= x->shape()[i];
    GB_ASSIGN_OR_RETURN(Tensor view, x->reshaped({outer, inner}));
    return ctx.alias_output(0, view);
  }

 private:
  FlattenAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Flatten(const graph::Node& node, int64_t) {
  FlattenAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 1));
  return std::unique_ptr<Op>(new FlattenOp(a));
}

}  // namespace glassbox::ops
