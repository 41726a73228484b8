// OptionalHasElement (opset 15+): a bool scalar, false for an empty optional
// (or an absent input), true otherwise.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class OptionalHasElementOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    const bool has = ctx.num_inputs() > 0 && ctx.input_value(0).kind != Value::Kind::kNone && ctx.input_value(0).defined();
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, {}));
    y->mutable_data<bool>()[0] = has;
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_OptionalHasElement(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new OptionalHasElementOp());
}

}  // namespace glassbox::ops
