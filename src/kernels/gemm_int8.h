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

#include "kernels/gemm.h"

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
  // f32 output, after the bias: GELU, then a residual [M, N] (row stride ld_residual) added last;
  // the same operations as the Gelu and Add ops they replace (gelu_erf_f32, one float add).
  GemmActivation activation = GemmActivation::kNone;
  const float* residual = nullptr;
  int64_t ld_residual = 0;
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

// Precision int8-dynamic (SessionOptions::precision) on a float32 model:
//   weights, once: per output column j, symmetric s8: sb[j] = max_k |B[k, j]| / 127,
//     qb[k, j] = round_half_even(B[k, j] / sb[j]) in [-127, 127] (a column of zeros: sb = 0, qb = 0;
//     a non-finite weight makes its column's scale NaN, so that column's outputs are NaN as in fp32);
//   activations, every call: per row i, u8 with a zero point, DynamicQuantizeLinear's formula on the
//     row: sa[i] = (max(0, max_k A) - min(0, min_k A)) / 255, za[i] = round(-min(0, min_k A) / sa[i]),
//     qa = saturate(round_half_even(A / sa[i]) + za[i]) (a row of zeros: sa = 1; a row with an
//     infinity: sa = NaN, its outputs NaN; NaN elements quantize to za as in ONNX);
//   C[i, j] = epilogue(float(sum_k (qa[i, k] - za[i]) * qb[k, j]) * (sa[i] * sb[j]))   (s32 sum, exact)
// u8 activations with a zero point, not s8: AVX-512 VNNI's vpdpbusd multiplies u8 by s8 natively
// (oneDNN's s8 x s8 adds a +128 shift and a compensation pass), the zero point costs one
// multiply-add per output (za[i] * colsum[j]), and an asymmetric range spends all 256 steps on
// skewed rows (after GELU, values lie in [-0.17, max]) where a symmetric one would waste half.
// Error, per output before the epilogue (|A - sa (qa - za)| <= sa / 2, |B - sb qb| <= sb / 2):
//   |C - A.B| <= sb[j] / 2 * sum_k |A[i, k]| + sa[i] / 2 * sum_k |B[k, j]| + K sa[i] sb[j] / 4
// (tests/quant/int8_dynamic_test.cpp derives its tolerance from this).
void quantize_columns_s8(int64_t K, int64_t N, bool trans_b, int64_t ldb, const void* B, int8_t* q, float* scale);
void quantize_rows_u8(int64_t M, int64_t K, const float* A, int64_t lda, uint8_t* q, float* scale, int32_t* zero_point);

// B float32 [K, N] (trans_b: [N, K]), row stride ldb, possibly misaligned (a mapped model
// file): quantized per column as above and packed like pack_gemm_b_s8.
std::shared_ptr<const PackedGemmS8B> pack_gemm_b_s8_from_f32(int64_t K, int64_t N, bool trans_b, int64_t ldb,
                                                              const void* B, ThreadPool* pool);
// The int8-dynamic product: C [M, N] (row stride ldc) from A float32 [M, K] (row stride lda)
// and B from pack_gemm_b_s8_from_f32; the epilogue (bias, GELU, residual) in fp32.
void gemm_f32_s8_dynamic(int64_t M, const float* A, int64_t lda, const PackedGemmS8B& B, float* C, int64_t ldc,
                         const GemmEpilogue& epilogue, ThreadPool* pool);
// oneDNN's implementation of the u8 x s8 -> s32 matmul on this CPU (e.g. "brg:avx512_core_vnni"),
// or "reference loops (no AVX-512 VNNI)".
const char* gemm_u8s8_implementation();

// The f32 epilogue of MatMulIntegerToFloat over an s32 product (unpacked paths).
void apply_qgemm_scale(int64_t M, int64_t N, const int32_t* acc, int64_t ld_acc, const float* scale, const float* bias,
                       float* C, int64_t ldc);

}  // namespace glassbox::kernels
