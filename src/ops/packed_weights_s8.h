// Constant int8 GEMM weights (MatMulInteger's B, the fused MatMulIntegerToFloat's
// weights) packed once and shared, like the float32 ones in packed_weights.h:
// keyed by the tensor's storage (Buffer identity held as weak_ptr), packed
// lazily at the first run, the packing alive as long as some op holds it.
#pragma once

#include <memory>

#include "core/thread_pool.h"
#include "glassbox/tensor.h"
#include "kernels/gemm_int8.h"
#include "ops/packed_slot.h"

namespace glassbox::ops {

// b: int8 [K, N], an initializer.
std::shared_ptr<const kernels::PackedGemmS8B> packed_weights_s8(const Tensor& b, ThreadPool& pool);

// One op's handle (PackedSlot).
class PackedWeightsS8Slot {
 public:
  std::shared_ptr<const kernels::PackedGemmS8B> get(const Tensor& b, ThreadPool& pool) const {
    return slot_.get(b, 0, [&] { return packed_weights_s8(b, pool); });
  }

 private:
  PackedSlot<kernels::PackedGemmS8B> slot_;
};

}  // namespace glassbox::ops
