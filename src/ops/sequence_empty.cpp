// SequenceEmpty (opset 11+): an empty sequence. `dtype` only types the (absent) elements.
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

class SequenceEmptyOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override { return ctx.set_output_sequence(0, {}); }
};

}  // namespace

Result<std::unique_ptr<Op>> create_SequenceEmpty(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"dtype"}));
  return std::unique_ptr<Op>(new SequenceEmptyOp());
}

}  // namespace glassbox::ops
