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

void layer_norm_rows_f32(int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta, float eps,
                         float* y, ThreadPool* pool);

// y = 0.5 * x * (1 + erf(x / sqrt(2))) over n elements (vectorized erf from vmath.h).
void gelu_erf_f32(const float* x, float* y, int64_t n, ThreadPool* pool);

}  // namespace glassbox::kernels
