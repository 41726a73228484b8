// Single-precision matrix multiply: C[b] = op(A[b]) * op(B[b]) for b in [0, batch).
// Row-major; op(X) = X or X^T. Optimized path: oneDNN matmul primitives, each
// run single-threaded on one tile of the product, the tiles spread over
// glassbox's ThreadPool (one set of threads, none spinning). Constant right-hand
// sides (weights) can be packed once into oneDNN's blocked layout and carry a
// fused epilogue (bias, GELU, residual add). Reference path: plain loops (tests).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/packed_bytes.h"

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

struct GemmDesc {
  int64_t batch = 1;   // number of independent products
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;  // A stored as [K, M] (lda >= M) instead of [M, K] (lda >= K)
  bool trans_b = false;  // B stored as [N, K] instead of [K, N]
  int64_t lda = 0, ldb = 0, ldc = 0;  // row strides in elements
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides; stride_b may be 0 (B shared by all)
};

// Overwrites C. Tiles run on `pool` (nullptr: the calling thread only).
void gemm_f32(const GemmDesc& d, const float* A, const float* B, float* C, ThreadPool* pool);

// Straightforward triple loop with double accumulation (test reference).
void gemm_f32_reference(const GemmDesc& d, const float* A, const float* B, float* C);

// What happens to each C element after the product, in this order.
enum class GemmActivation { kNone, kGeluErf };  // kGeluErf: x * 0.5 * (1 + erf(x / sqrt(2)))
struct GemmEpilogue {
  const float* bias = nullptr;      // [N] added to every row, or nullptr
  GemmActivation activation = GemmActivation::kNone;
  const float* residual = nullptr;  // [M, N] (row stride ld_residual) added last, or nullptr; must not alias C
  int64_t ld_residual = 0;
};

// A constant B [K, N] (or [N, K] when trans_b) reordered once into oneDNN's
// blocked layout, cut into column blocks that are the unit of parallel work. B holds
// floats but may be misaligned for them (weights viewed in a mapped model file): each
// block is then copied (memcpy) into aligned storage before the reorder.
// kBf16: the reorder also converts B to bfloat16 (round to nearest even).
// kS8Dynamic: B quantized to int8 per output column and packed for the u8 x s8 product
// (precision int8-dynamic; gemm_int8.h, pack_gemm_b_s8_from_f32 / gemm_f32_s8_dynamic).
// Above kS8DynamicMaxK rows the int32 sum could overflow: such B is packed as kF32.
enum class PackedPrecision { kF32, kBf16, kS8Dynamic };
constexpr int64_t kS8DynamicMaxK = 65536;
struct PackedGemmB;
std::shared_ptr<const PackedGemmB> pack_gemm_b(int64_t K, int64_t N, bool trans_b, int64_t ldb, const void* B,
                                               PackedPrecision precision, ThreadPool* pool);
inline std::shared_ptr<const PackedGemmB> pack_gemm_b_f32(int64_t K, int64_t N, bool trans_b, int64_t ldb, const void* B,
                                                          ThreadPool* pool) {
  return pack_gemm_b(K, N, trans_b, ldb, B, PackedPrecision::kF32, pool);
}
int64_t packed_gemm_b_bytes(const PackedGemmB& b);
PackedPrecision packed_gemm_b_precision(const PackedGemmB& b);

// For the packed-weights cache: the packing as bytes (segments point into `b`, which
// `owner` keeps alive), and back. from_bytes uses the segments in place (no copy; they
// must be 64-byte aligned and stay alive with `bytes.owner`) and returns nullptr, with
// the reason in *why, when the text or a segment's size is not what this build packs
// for [K, N] at `precision` (the block layouts are recomputed here, not read from the file).
PackedBytes packed_gemm_b_to_bytes(std::shared_ptr<const PackedGemmB> b);
std::shared_ptr<const PackedGemmB> packed_gemm_b_from_bytes(int64_t K, int64_t N, PackedPrecision precision,
                                                            const PackedBytes& bytes, std::string* why);

// C[M, N] (row stride ldc) = epilogue(A[M, K] (row stride lda) * B). With bf16 weights
// A is converted to bfloat16 once per call (round to nearest even) before the tiles
// run; products accumulate in fp32 and C, bias, GELU and residual stay fp32. With
// kS8Dynamic weights: gemm_f32_s8_dynamic (A quantized per row, s32 accumulation).
void gemm_f32_packed(int64_t M, const float* A, int64_t lda, const PackedGemmB& B, float* C, int64_t ldc,
                     const GemmEpilogue& epilogue, ThreadPool* pool);

// float32 -> bfloat16, round to nearest even, NaN kept quiet (AVX512-BF16 when the CPU has it).
void convert_f32_to_bf16(const float* in, uint16_t* out, int64_t n);

// What decides the packed layouts on this machine, for the packed-weights cache key:
// oneDNN's version and build hash, the ISA it dispatches to, and the CPU's vector
// features (e.g. "onednn 2.6.3 (hash); isa 0x..; cpu avx2 avx512f ... avx512bf16").
std::string packed_layout_cpu_key();

// oneDNN's implementation for a bf16 x bf16 -> f32 matmul on this CPU (e.g.
// "brg:avx512_core_bf16"; a "ref" or "gemm:ref" name means no native bf16 and slow runs).
const char* gemm_bf16_implementation();

// The epilogue as plain loops over an already computed C (unpacked paths and tests).
void apply_gemm_epilogue(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& epilogue);

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
