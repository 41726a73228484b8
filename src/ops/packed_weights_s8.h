// Constant int8 GEMM weights (MatMulInteger's B, the fused MatMulIntegerToFloat's
// weights) packed once and shared, like the float32 ones in packed_weights.h:
// keyed by the tensor's storage (Buffer identity held as weak_ptr), packed
// lazily at the first run, the packing alive as long as some op holds it.
#pragma once

#include <memory>
#include <mutex>

#include "core/thread_pool.h"
#include "glassbox/tensor.h"
#include "kernels/gemm_int8.h"

namespace glassbox::ops {

// b: int8 [K, N], an initializer.
std::shared_ptr<const kernels::PackedGemmS8B> packed_weights_s8(const Tensor& b, ThreadPool& pool);

class PackedWeightsS8Slot {
 public:
  std::shared_ptr<const kernels::PackedGemmS8B> get(const Tensor& b, ThreadPool& pool) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!packed_ || buffer_.lock() != b.buffer() || offset_ != b.byte_offset()) {
      packed_ = packed_weights_s8(b, pool);
      buffer_ = b.buffer();
      offset_ = b.byte_offset();
    }
    return packed_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::shared_ptr<const kernels::PackedGemmS8B> packed_;
  mutable std::weak_ptr<Buffer> buffer_;
  mutable size_t offset_ = 0;
};

}  // namespace glassbox::ops
