// Identity: output aliases the input (no copy); sequences and optionals (opset 14+/16+)
// pass through as they are.
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class IdentityOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    if (ctx.input_sequence(0) || ctx.input_is_none(0)) return ctx.set_output_value(0, ctx.input_value(0));
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    return ctx.alias_output(0, *x);
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Identity(const graph::Node&, int64_t) {
  return std::unique_ptr<Op>(new IdentityOp());
}

}  // namespace glassbox::ops
