// The integer product shared by MatMulInteger (int32 output) and the internal
// glassbox::MatMulIntegerToFloat (float output, made by quantized_matmul_fusion):
// (A - a_zero_point) x (B - b_zero_point) with A [..., M, K], B [K, N] (or with
// A's batch dims); zero points scalar, per row of A ([M]) / per column of B ([N]).
// Fast path (kernels/gemm_int8.h): A uint8, B a constant int8 2-D initializer
// (kernel variant packed_weights on). Otherwise plain loops.
#pragma once

#include "kernels/gemm.h"
#include "ops/elementwise.h"
#include "ops/packed_weights_s8.h"

namespace glassbox::ops {

struct QMatMulOut {
  int32_t* s32 = nullptr;        // MatMulInteger
  float* f32 = nullptr;          // MatMulIntegerToFloat: float(acc) * scale[j] (+ bias[j])
  const float* scale = nullptr;  // N entries
  const float* bias = nullptr;   // N entries or nullptr
  kernels::GemmActivation activation = kernels::GemmActivation::kNone;  // after the bias
  const float* residual = nullptr;  // the output's shape, added last, or nullptr
};

// The output shape of A x B, or the reason it is refused.
Result<Shape> qmatmul_shape(const ComputeContext& ctx, const Tensor& a, const Tensor& b);

Status qmatmul_run(ComputeContext& ctx, const Tensor& a, const Tensor& b, const Tensor* a_zp, const Tensor* b_zp,
                   const PackedWeightsS8Slot& slot, const QMatMulOut& out);

}  // namespace glassbox::ops
