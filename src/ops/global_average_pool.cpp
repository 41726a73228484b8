// GlobalAveragePool (float32): average over all spatial dims -> [N, C, 1, ...].
#include "ops/global_pool.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_GlobalAveragePool(const graph::Node&, int64_t) {
  return std::unique_ptr<Op>(new GlobalPoolOp(/*max=*/false));
}

}  // namespace glassbox::ops
