// Constant GEMM weights packed once and shared. An op asks for the packed form
// of an initializer; the first ask packs it (lazily, at the first run, so load
// stays fast), later asks from any op instance of any compiled graph of the
// session (per-shape specializations included) get the same packing.
// Keyed by the tensor's storage (Buffer identity held as weak_ptr, so a freed
// and reused address is never mistaken for the old weights); the packing lives
// as long as some op holds it.
#pragma once

#include <memory>

#include "core/thread_pool.h"
#include "glassbox/precision.h"
#include "glassbox/tensor.h"
#include "kernels/gemm.h"
#include "ops/packed_slot.h"

namespace glassbox::ops {

// b: float32 [K, N] (trans_b = false) or [N, K] (trans_b = true), an initializer.
// Precision::kBf16 packs a bfloat16 copy, kInt8Dynamic an int8 one quantized per output column
// (each kept apart from an fp32 packing of the same weights).
std::shared_ptr<const kernels::PackedGemmB> packed_weights(const Tensor& b, bool trans_b, ThreadPool& pool,
                                                           Precision precision = Precision::kFp32);

// The arithmetic packed_weights gives a linear layer at `precision` (not fp32) when its right-hand side
// is the constant `b` (nullptr: computed, so nothing is packed): Op::precision_decision's text for
// MatMul, Gemm and FusedMatMul. "" when the precision does not apply (not a float32 matrix).
std::string packed_precision_decision(Precision precision, const Tensor* b, bool trans_b);

// One op's handle: remembers the packing of the weights it was first given (PackedSlot).
class PackedWeightsSlot {
 public:
  std::shared_ptr<const kernels::PackedGemmB> get(const Tensor& b, bool trans_b, ThreadPool& pool,
                                                  Precision precision = Precision::kFp32) const {
    const int variant = static_cast<int>(precision) * 2 + (trans_b ? 1 : 0);
    return slot_.get(b, variant, [&] { return packed_weights(b, trans_b, pool, precision); });
  }

 private:
  PackedSlot<kernels::PackedGemmB> slot_;
};

}  // namespace glassbox::ops
