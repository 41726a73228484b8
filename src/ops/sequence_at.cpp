// SequenceAt (opset 11+): the element at `position` ([-n, n-1]); the output shares its storage.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceAtOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* s, seq::need_sequence(ctx, 0, "input_sequence"));
    GB_ASSIGN_OR_RETURN(const Tensor* p, nn::need_input(ctx, 1, "position"));
    GB_ASSIGN_OR_RETURN(int64_t pos, seq::read_position(ctx, *p, static_cast<int64_t>(s->size()), /*allow_end=*/false));
    return ctx.alias_output(0, (*s)[static_cast<size_t>(pos)]);
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceAt(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new SequenceAtOp());
}

}  // namespace glassbox::ops
