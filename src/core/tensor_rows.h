// Rows of dim 0, copied and stacked: what the server's tensor batches (stack requests, split the
// results back) and probe's batch-invariance check (a row run alone) share. Fixed-size dtypes only:
// a string tensor is an error (its elements are not bytes in place).
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/tensor.h"

namespace glassbox {

// Rows [begin, begin + count) of `t` (rank >= 1) as a new tensor of shape [count, t.shape()[1:]].
Result<Tensor> copy_rows(const Tensor& t, int64_t begin, int64_t count);

// The parts stacked along dim 0: one dtype, equal dims after dim 0, at least one part.
Result<Tensor> concat_rows(const std::vector<const Tensor*>& parts);

}  // namespace glassbox
