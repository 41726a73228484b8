// Products with block-quantized weights (com.microsoft MatMulNBits): Y[M, N] = A[M, K] x W^T with
// W[n, k] = (code - zero) * scale, codes of `bits` bits packed along K low bits first, one scale
// (and zero point) per block of block_size values of a row. The kernels multiply straight from
// the packed codes (each block decoded in registers, never written out), which is what decode
// steps (M of a few rows) need: the weights are read once per call at their packed size.
// Dispatch (matmul_nbits.cpp): AVX-512 (avx512_dq_fma) or AVX2 (avx2_fma) loops for bits 8 and for
// bits 4 with block_size a multiple of 32; otherwise (bits 4 with block 16, other CPUs) the
// scalar loop. Every form dequantizes a weight as fma(code, scale, -zero * scale) and sums
// a * w in fp32; they differ only in summation order.
#pragma once

#include <cstdint>
#include <vector>

namespace glassbox::kernels {

// Up to this many rows of A the op runs matmul_nbits_f32; above it, decoded tiles through the fp32
// GEMM (each decoded weight then serves many rows).
constexpr int64_t kNBitsDirectMaxRows = 16;

struct NBitsWeights {
  const uint8_t* codes = nullptr;         // [N, k_blocks, block_size * bits / 8]
  const float* scales = nullptr;          // [N * k_blocks]
  const uint8_t* zero_packed = nullptr;   // [N, ceil(k_blocks * bits / 8)] or null
  const float* zero_float = nullptr;      // [N * k_blocks] or null; both null: 2^(bits - 1)
  int64_t N = 0, K = 0, bits = 4, block_size = 32;
  int64_t k_blocks() const { return (K + block_size - 1) / block_size; }
  int64_t blob() const { return block_size * bits / 8; }
};

// A[M, K] rearranged for the kernel (K padded with zeros to k_blocks * block_size; for bits 4
// each 32 values stored as their 16 even- then 16 odd-indexed ones, the order the low and high
// nibbles of 16 packed bytes decode into). Made once per call, shared by the threads.
struct NBitsActivations {
  std::vector<float> data;  // [M, k_padded]
  int64_t M = 0, k_padded = 0;
};
NBitsActivations prepare_nbits_activations(const float* A, int64_t M, const NBitsWeights& w);

// Y[m * ldy + n] for n in [n0, n1), all M rows (Y points at column 0). Bias not included.
void matmul_nbits_f32(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y, int64_t ldy);

// Rows n0..n1 of W dequantized to fp32 in the prepared activations' order, a.k_padded values each
// (row stride k_padded; past K the values meet the activations' zeros): for many rows of A, where
// the fp32 GEMM of the prepared activations with a decoded tile is faster.
void dequantize_nbits_rows(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1, float* out);

// The zero point of block kb of row n (the declared default 2^(bits - 1) when none is given).
inline float nbits_zero(const NBitsWeights& w, int64_t n, int64_t kb) {
  const int64_t kb_count = w.k_blocks();
  if (w.zero_float) return w.zero_float[n * kb_count + kb];
  if (!w.zero_packed) return static_cast<float>(int64_t{1} << (w.bits - 1));
  const int64_t row = (kb_count * w.bits + 7) / 8;
  const uint8_t byte = w.zero_packed[n * row + (w.bits == 4 ? kb / 2 : kb)];
  return static_cast<float>(w.bits == 8 ? byte : (kb % 2 == 0 ? byte & 0x0F : byte >> 4));
}

// The kernel matmul_nbits_f32 runs on this CPU for these weights ("x86/matmul_nbits_x86.cpp AVX-512", "scalar").
const char* matmul_nbits_implementation(const NBitsWeights& w);

// accuracy_level 4 (ORT's "int8 compute" for MatMulNBits): each block of block_size values of a row of A
// quantized to int8, symmetric, scale = max|a| / 127, q = a * (127 / max|a|) rounded to nearest even (0 for an
// all-zero block), as ORT's CPU kernel does; a product block is scale_b * scale_a * (sum code*q - zero * sum q).
// Layout of q: bits 4: per 64 bytes of a weight row's codes (128 values), the 64 values the low nibbles hold,
// then the 64 the high nibbles hold (row byte j holds values 2j and 2j+1: blocks are contiguous along K);
// bits 8: natural order. Padded with zeros to whole 64-byte chunks of codes.
struct NBitsInt8Activations {
  std::vector<int8_t> q;        // [M, row_values]
  std::vector<float> scale;     // [M, k_blocks]: scale_a
  std::vector<float> sum;       // [M, k_blocks]: scale_a * sum of the block's q (the zero point's term)
  int64_t M = 0, row_values = 0, k_blocks = 0;
};
NBitsInt8Activations quantize_nbits_activations(const float* A, int64_t M, const NBitsWeights& w);

// Y[m * ldy + n] for n in [n0, n1) from int8 activations: AVX-512 VNNI (bits 4 and 8) or the scalar loop.
void matmul_nbits_int8(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                       int64_t ldy);
bool nbits_int8_vnni_available();
// The int8 activations as floats (q * scale_a), [M, K] in natural order: for many rows, the decoded-tile GEMM on
// these computes the same products as the int8 kernels (up to the order of the float sums).
std::vector<float> nbits_int8_as_float(const NBitsInt8Activations& a, const NBitsWeights& w);
void matmul_nbits_int8_form(bool vnni, const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1,
                            float* Y, int64_t ldy);

// Which form to run, for tests: every form must agree with the scalar one.
enum class NBitsForm { kAuto, kScalar, kAvx2, kAvx512 };
bool nbits_form_available(NBitsForm f, const NBitsWeights& w);
void matmul_nbits_f32_form(NBitsForm f, const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1,
                           float* Y, int64_t ldy);

namespace x86 {  // kernels/x86/matmul_nbits_x86.cpp (kernels/portable/x86_absent.cpp elsewhere)
void matmul_nbits_f32_avx512(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                             int64_t ldy);
void matmul_nbits_f32_avx2(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                           int64_t ldy);
void dequantize_nbits_rows_avx512(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1, float* out);
void matmul_nbits_int8_vnni(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                            int64_t ldy);
}  // namespace x86

}  // namespace glassbox::kernels
