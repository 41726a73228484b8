// SequenceInsert (opset 11+): a new sequence with `tensor` inserted at `position`
// (default: the end; [-n, n]). Copies element handles, not element data.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceInsertOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* s, seq::need_sequence(ctx, 0, "input_sequence"));
    GB_ASSIGN_OR_RETURN(const Tensor* t, nn::need_input(ctx, 1, "tensor"));
    GB_RETURN_IF_ERROR(seq::check_same_dtype(ctx, *s, *t));
    const int64_t n = static_cast<int64_t>(s->size());
    int64_t pos = n;
    if (const Tensor* p = ctx.input(2)) {
      GB_ASSIGN_OR_RETURN(pos, seq::read_position(ctx, *p, n, /*allow_end=*/true));
    }
    std::vector<Tensor> out(*s);
    out.insert(out.begin() + pos, *t);
    return ctx.set_output_sequence(0, std::move(out));
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceInsert(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new SequenceInsertOp());
}

}  // namespace glassbox::ops
