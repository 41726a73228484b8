// Optional (opset 15+): wraps the input (a tensor or a sequence) in an optional,
// or makes an empty optional when the input is absent (`type` then types it).
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class OptionalOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    const Value v = ctx.num_inputs() > 0 ? ctx.input_value(0) : Value();
    if (!v.defined()) return ctx.set_output_none(0);
    return ctx.set_output_value(0, v);
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Optional(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"type"}));
  if ((node.inputs.empty() || node.inputs[0].empty()) && !node.attr("type"))
    return make_error(ErrorCode::kInvalidModel, "Optional without an input needs the 'type' attribute");
  return std::unique_ptr<Op>(new OptionalOp());
}

}  // namespace glassbox::ops
