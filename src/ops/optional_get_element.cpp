// OptionalGetElement (opset 15+): the tensor or sequence inside the optional;
// an empty optional is an error.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class OptionalGetElementOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    const Value v = ctx.input_value(0);
    if (v.kind == Value::Kind::kNone)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "the optional input is empty",
                            "check it with OptionalHasElement first");
    if (!v.defined()) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "required input 0 (input) is missing");
    return ctx.set_output_value(0, v);
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_OptionalGetElement(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new OptionalGetElementOp());
}

}  // namespace glassbox::ops
