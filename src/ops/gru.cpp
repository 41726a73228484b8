// GRU (opset 7+): update z, reset r and hidden h gates; linear_before_reset selects
// where R_h is applied (before or after scaling by r).
// Shared attribute parsing and validation: ops/recurrent_common.cpp; math: kernels/rnn.cpp.
#include "ops/recurrent_common.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_GRU(const graph::Node& node, int64_t opset) {
  GB_ASSIGN_OR_RETURN(RecurrentAttrs a, parse_recurrent_attrs(node, kernels::RecurrentCell::kGru, opset));
  return std::unique_ptr<Op>(new RecurrentOp(kernels::RecurrentCell::kGru, std::move(a)));
}

}  // namespace glassbox::ops
