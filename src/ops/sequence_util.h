// Shared by the sequence and optional ops (SequenceAt, SequenceInsert, ...):
// reading a sequence input and a scalar position with clear range errors.
// Elements are immutable tensor handles: ops copy the handle vector, never element data.
#pragma once

#include <string>
#include <vector>

#include "ops/nn_args.h"

namespace glassbox::ops::seq {

// Input i as a sequence, or an error naming what it is instead.
inline Result<const std::vector<Tensor>*> need_sequence(const ComputeContext& ctx, size_t i, const char* what) {
  if (const auto* s = ctx.input_sequence(i)) return s;
  const char* got = ctx.input(i) ? "a tensor" : ctx.input_is_none(i) ? "an empty optional" : "missing";
  return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                        "input " + std::to_string(i) + " (" + what + ") must be a sequence, it is " + got);
}

// Reads a scalar (or one-element) int32/int64 position and maps [-n, hi] onto [0, hi]
// where hi is n - 1 (an existing element) or n (insert at the end when allow_end).
inline Result<int64_t> read_position(const ComputeContext& ctx, const Tensor& t, int64_t n, bool allow_end) {
  if (t.numel() != 1)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "position must be a scalar, got shape " + shape_to_string(t.shape()));
  GB_ASSIGN_OR_RETURN(std::vector<int64_t> p, nn::read_ints(ctx, t, "position"));
  const int64_t hi = allow_end ? n : n - 1;
  if (p[0] < -n || p[0] > hi)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "position " + std::to_string(p[0]) + " is out of range for a sequence of " + std::to_string(n) +
                              " elements",
                          n == 0 && !allow_end ? "the sequence is empty"
                                               : "position must lie in [" + std::to_string(-n) + ", " + std::to_string(hi) + "]");
  return p[0] < 0 ? p[0] + n : p[0];
}

// Elements of one sequence share a dtype.
inline Status check_same_dtype(const ComputeContext& ctx, const std::vector<Tensor>& elements, const Tensor& t) {
  if (!elements.empty() && elements.front().dtype() != t.dtype())
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string("tensor has dtype ") + dtype_name(t.dtype()) + ", the sequence holds " +
                              dtype_name(elements.front().dtype()));
  return {};
}

}  // namespace glassbox::ops::seq
