// Reshape (opset 5+: shape is an input). 0 copies the input dim unless
// allowzero=1 (opset 14); one -1 is inferred. Output aliases the input.
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct ReshapeAttrs {
  int64_t allowzero = 0;  // 1: a 0 in `shape` means an empty dim, not "copy the input dim"
};

class ReshapeOp final : public Op {
 public:
  explicit ReshapeOp(ReshapeAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* s, nn::need_input(ctx, 1, "shape"));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, nn::read_ints(ctx, *s, "shape"));
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !a_.allowzero) {
        if (i >= static_cast<size_t>(x->rank()))
          return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                                "shape[" + std::to_string(i) + "] = 0 copies an input dim, but input " +
                                    shape_to_string(x->shape()) + " has rank " + std::to_string(x->rank()));
        shape[i] = x->shape()[i];
      }
      if (shape[i] == -1) {
        if (infer >= 0)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument, "shape has more than one -1");
        infer = static_cast<int64_t>(i);
      } else if (shape[i] < 0) {
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "shape[" + std::to_string(i) + "] = " + std::to_string(shape[i]) + " is negative");
      } else if (__builtin_mul_overflow(known, shape[i], &known)) {
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "shape " + shape_to_string(shape) + " overflows int64");
      }
    }
    if (infer >= 0) {
      if (known == 0 || x->numel() % known != 0)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "cannot infer -1: input " + shape_to_string(x->shape()) + " does not divide into " +
                                  shape_to_string(shape));
      shape[static_cast<size_t>(infer)] = x->numel() / known;
    }
    auto view = x->reshaped(shape);
    if (!view.ok()) return std::move(view).take_error().with_where("node '" + ctx.node_name() + "'");
    return ctx.alias_output(0, view.value());
  }

 private:
  ReshapeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Reshape(const graph::Node& node, int64_t opset) {
  ReshapeAttrs a;
  if (opset >= 14) {
    GB_ASSIGN_OR_RETURN(a.allowzero, attr_int(node, "allowzero", 0));
  }
  return std::unique_ptr<Op>(new ReshapeOp(a));
}

}  // namespace glassbox::ops
