// SequenceLength (opset 11+): the number of elements, an int64 scalar.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceLengthOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* s, seq::need_sequence(ctx, 0, "input_sequence"));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {}));
    y->mutable_data<int64_t>()[0] = static_cast<int64_t>(s->size());
    return {};
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceLength(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new SequenceLengthOp());
}

}  // namespace glassbox::ops
