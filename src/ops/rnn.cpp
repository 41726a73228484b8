// RNN (opset 7+): H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb).
// Shared attribute parsing and validation: ops/recurrent_common.cpp; math: kernels/rnn.cpp.
#include "ops/recurrent_common.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_RNN(const graph::Node& node, int64_t opset) {
  GB_ASSIGN_OR_RETURN(RecurrentAttrs a, parse_recurrent_attrs(node, kernels::RecurrentCell::kRnn, opset));
  return std::unique_ptr<Op>(new RecurrentOp(kernels::RecurrentCell::kRnn, std::move(a)));
}

}  // namespace glassbox::ops
