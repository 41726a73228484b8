// Single-precision matrix multiply: C[b] = op(A[b]) * op(B[b]) for b in [0, batch).
// Row-major; op(X) = X or X^T. Optimized path: oneDNN matmul (primitives cached
// per shape, thread-safe); reference path: plain loops, used by tests.
#pragma once

#include <cstdint>

namespace glassbox::kernels {

struct GemmDesc {
  int64_t batch = 1;   // number of independent products
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;  // A stored as [K, M] (lda >= M) instead of [M, K] (lda >= K)
  bool trans_b = false;  // B stored as [N, K] instead of [K, N]
  int64_t lda = 0, ldb = 0, ldc = 0;  // row strides in elements
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides; stride_b may be 0 (B shared by all)
};

// Overwrites C. `threads` caps oneDNN's (OpenMP) parallelism for this call.
void gemm_f32(const GemmDesc& d, const float* A, const float* B, float* C, int threads);

// Straightforward triple loop with double accumulation (test reference).
void gemm_f32_reference(const GemmDesc& d, const float* A, const float* B, float* C);

// Plain loops for any arithmetic type (float64 MatMul/Einsum; small sizes).
template <class T>
void gemm_naive(const GemmDesc& d, const T* A, const T* B, T* C) {
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.M; ++i)
      for (int64_t j = 0; j < d.N; ++j) {
        T acc = 0;
        for (int64_t k = 0; k < d.K; ++k)
          acc += (d.trans_a ? A[b * d.stride_a + k * d.lda + i] : A[b * d.stride_a + i * d.lda + k]) *
                 (d.trans_b ? B[b * d.stride_b + j * d.ldb + k] : B[b * d.stride_b + k * d.ldb + j]);
        C[b * d.stride_c + i * d.ldc + j] = acc;
      }
}

}  // namespace glassbox::kernels
