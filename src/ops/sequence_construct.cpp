// SequenceConstruct (opset 11+): a sequence of the input tensors (same dtype), no copy.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceConstructOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    std::vector<Tensor> elements;
    elements.reserve(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* t, nn::need_input(ctx, i, "inputs"));
      GB_RETURN_IF_ERROR(seq::check_same_dtype(ctx, elements, *t));
      elements.push_back(*t);
    }
    return ctx.set_output_sequence(0, std::move(elements));
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceConstruct(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  if (node.inputs.empty()) return make_error(ErrorCode::kInvalidModel, "SequenceConstruct needs at least one input");
  return std::unique_ptr<Op>(new SequenceConstructOp());
}

}  // namespace glassbox::ops
