// LSTM (opset 7+): input, output, forget and cell gates, optional peepholes P and
// input_forget (forget = 1 - input).
// Shared attribute parsing and validation: ops/recurrent_common.cpp; math: kernels/rnn.cpp.
#include "ops/recurrent_common.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_LSTM(const graph::Node& node, int64_t opset) {
  GB_ASSIGN_OR_RETURN(RecurrentAttrs a, parse_recurrent_attrs(node, kernels::RecurrentCell::kLstm, opset));
  return std::unique_ptr<Op>(new RecurrentOp(kernels::RecurrentCell::kLstm, std::move(a)));
}

}  // namespace glassbox::ops
