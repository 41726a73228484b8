// SequenceErase (opset 11+): a new sequence without the element at `position`
// (default: the last; [-n, n-1]).
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceEraseOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* s, seq::need_sequence(ctx, 0, "input_sequence"));
    const int64_t n = static_cast<int64_t>(s->size());
    if (n == 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "cannot erase from an empty sequence");
    int64_t pos = n - 1;
    if (const Tensor* p = ctx.input(1)) {
      GB_ASSIGN_OR_RETURN(pos, seq::read_position(ctx, *p, n, /*allow_end=*/false));
    }
    std::vector<Tensor> out(*s);
    out.erase(out.begin() + pos);
    return ctx.set_output_sequence(0, std::move(out));
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceErase(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new SequenceEraseOp());
}

}  // namespace glassbox::ops
