// Integer matrix multiply for quantized models: uint8 activations x int8 weights
// with int32 accumulation (MatMulInteger, and the fused MatMulIntegerToFloat).
//   acc[i, j] = sum_k (A[i, k] - a_zp[i]) * (B[k, j] - b_zp[j])       (exact, int32)
//   s32 output: C[i, j] = acc[i, j]
//   f32 output: C[i, j] = float(acc[i, j]) * scale[j] (+ bias[j])    (ONNX Cast then Mul, then Add)
// Fast path: the constant B is packed once into oneDNN's blocked int8 layout (column
// blocks, the unit of parallel work, as the float32 packed weights in gemm_dnnl.cpp)
// together with its column sums; oneDNN computes sum_k A*B (u8 x s8 -> s32) on each
// tile single-threaded, and the zero points are applied afterwards exactly:
//   acc = A.B - a_zp[i] * colsum_B[j] - b_zp[j] * rowsum_A[i] + K * a_zp[i] * b_zp[j]
// (int32 arithmetic modulo 2^32; the true value fits int32 for K < 2^16).
// oneDNN is exact only where the CPU has a non-saturating u8 x s8 dot product
// (AVX-512 VNNI, or AMX): without it oneDNN's AVX-512/AVX2 path sums pairs in int16
// with saturation. So without VNNI the "packed" form keeps the plain int8 weights and
// the tiles run the reference loops (exact, slow).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/packed_bytes.h"

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// True when the oneDNN u8 x s8 path is used (the CPU has AVX-512 VNNI).
bool gemm_u8s8_fast_available();

// int8 B [K, N], row-major with row stride ldb, packed once (with its column sums).
struct PackedGemmS8B;
std::shared_ptr<const PackedGemmS8B> pack_gemm_b_s8(int64_t K, int64_t N, int64_t ldb, const int8_t* B,
                                                    ThreadPool* pool);
int64_t packed_gemm_b_s8_bytes(const PackedGemmS8B& b);
// For the packed-weights cache, as packed_gemm_b_to_bytes / packed_gemm_b_from_bytes (gemm.h).
PackedBytes packed_gemm_b_s8_to_bytes(std::shared_ptr<const PackedGemmS8B> b);
std::shared_ptr<const PackedGemmS8B> packed_gemm_b_s8_from_bytes(int64_t K, int64_t N, const PackedBytes& bytes,
                                                                  std::string* why);

struct QGemmArgs {
  int64_t M = 0;
  const uint8_t* A = nullptr;  // [M, K], row stride lda
  int64_t lda = 0;
  const int32_t* a_zp = nullptr;  // M entries (per row) or 1 entry (a_zp_per_row = false); nullptr = 0
  bool a_zp_per_row = false;
  const int32_t* b_zp = nullptr;  // N entries; nullptr = all 0
  // Output: exactly one of C_s32 / C_f32, row stride ldc.
  int32_t* C_s32 = nullptr;
  float* C_f32 = nullptr;
  int64_t ldc = 0;
  const float* scale = nullptr;  // f32 output: N entries (a_scale * b_scale[j])
  const float* bias = nullptr;   // f32 output: N entries added after the scale, or nullptr
};

void gemm_u8s8_packed(const QGemmArgs& args, const PackedGemmS8B& B, ThreadPool* pool);

// Plain loops, any of uint8/int8 for A and B, s32 output (test reference and the
// unpacked paths): C[i, j] = sum_k (A[i,k] - a_zp[i or 0]) * (B[k,j] - b_zp[j or 0]).
template <class TA, class TB>
void gemm_integer_reference(int64_t M, int64_t N, int64_t K, const TA* A, int64_t lda, const int32_t* a_zp,
                            bool a_zp_per_row, const TB* B, int64_t ldb, const int32_t* b_zp, bool b_zp_per_col,
                            int32_t* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    const int32_t za = a_zp ? a_zp[a_zp_per_row ? i : 0] : 0;
    int32_t* c = C + i * ldc;
    for (int64_t j = 0; j < N; ++j) c[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int32_t av = static_cast<int32_t>(A[i * lda + k]) - za;
      const TB* b = B + k * ldb;
      for (int64_t j = 0; j < N; ++j) {
        const int32_t zb = b_zp ? b_zp[b_zp_per_col ? j : 0] : 0;
        c[j] += av * (static_cast<int32_t>(b[j]) - zb);
      }
    }
  }
}

// The f32 epilogue of MatMulIntegerToFloat over an s32 product (unpacked paths).
void apply_qgemm_scale(int64_t M, int64_t N, const int32_t* acc, int64_t ld_acc, const float* scale, const float* bias,
                       float* C, int64_t ldc);

}  // namespace glassbox::kernels
