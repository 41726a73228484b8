// Validation of explicit split sizes (Split, SplitToSequence): every size in [0, dim] (which
// also keeps the sum from overflowing) and the sizes summing to the axis dim.
#pragma once

#include <string>
#include <vector>

#include "ops/nn_args.h"

namespace glassbox::ops {

inline Status check_split_sizes(const ComputeContext& ctx, const std::vector<int64_t>& sizes, int64_t dim) {
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "split size " + std::to_string(s) + " is outside [0, " + std::to_string(dim) + "]");
    sum += s;
  }
  if (sum != dim)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "split sizes sum to " + std::to_string(sum) + " but axis dim is " + std::to_string(dim));
  return {};
}

}  // namespace glassbox::ops
