// The additive mask of the fused attention ops (MultiHeadAttention, DecoderAttention): its
// element strides over the scores' dims [batch, heads, q_tokens, kv_tokens], 0 where it broadcasts.
#pragma once

#include "ops/broadcast.h"
#include "ops/elementwise.h"

namespace glassbox::ops {

inline Status attention_mask_strides(ComputeContext& ctx, const char* op, const Tensor& mask, const Shape& scores,
                                     int64_t* stride) {
  auto bs = broadcast_shapes(scores, mask.shape());
  if (!bs.ok() || *bs != scores || mask.shape().size() > 4)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(op) + ": mask " + shape_to_string(mask.shape()) + " does not broadcast to the scores " +
                        shape_to_string(scores));
  Shape ms(4 - mask.shape().size(), 1);
  ms.insert(ms.end(), mask.shape().begin(), mask.shape().end());
  int64_t acc = 1;
  for (int i = 4; i-- > 0;) {
    stride[i] = ms[static_cast<size_t>(i)] == 1 ? 0 : acc;
    acc *= ms[static_cast<size_t>(i)];
  }
  return {};
}

}  // namespace glassbox::ops
