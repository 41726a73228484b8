// GlobalMaxPool (float32): max over all spatial dims -> [N, C, 1, ...].
#include "ops/global_pool.h"

namespace glassbox::ops {

Result<std::unique_ptr<Op>> create_GlobalMaxPool(const graph::Node&, int64_t) {
  return std::unique_ptr<Op>(new GlobalPoolOp(/*max=*/true));
}

}  // namespace glassbox::ops
