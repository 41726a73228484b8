// LayerNorm over contiguous rows for the fused glassbox::LayerNorm op:
// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row of `cols`.
// Float accumulation in 16 independent lanes (the compiler vectorizes it),
// two passes (mean, then centered squares): tested against norm.h's
// double-accumulating layer_norm_f32.
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// One row in the scalar loops (the reference of the AVX-512 row in x86/rows_avx512.cpp, which
// layer_norm_rows_f32 uses when the CPU has AVX-512: the same results bit for bit).
void layer_norm_row_f32_scalar(const float* x, int64_t cols, const float* gamma, const float* beta, float eps, float* y);

// One row, the AVX-512 form when the CPU has it (layer_norm_rows_f32's rows).
void layer_norm_row_f32(const float* x, int64_t cols, const float* gamma, const float* beta, float eps, float* y);

void layer_norm_rows_f32(int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta, float eps,
                         float* y, ThreadPool* pool);

// layer_norm_rows_f32, then DynamicQuantizeLinear of the whole y (uint8, per tensor) with each
// row's min/max taken while the row is in cache (layer_norm_quantize.cpp): y, q, scale and zero
// point equal the two ops' outputs bit for bit.
void layer_norm_rows_quantize_u8(int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta,
                                 float eps, float* y, uint8_t* q, float* scale, int32_t* zero_point, ThreadPool* pool);

// y = 0.5 * x * (1 + erf(x / sqrt(2))) over n elements (vectorized erf from vmath.h).
void gelu_erf_f32(const float* x, float* y, int64_t n, ThreadPool* pool);

}  // namespace glassbox::kernels
