// MatMulNBits' products from packed codes (kernels/matmul_nbits.h): the activations' layout, the
// scalar form (the reference every vector form is tested against, tests/ops_math/matmul_nbits_test.cpp),
// dequantization of whole rows for the large-M path, and the dispatch.
#include "kernels/matmul_nbits.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu_features.h"

namespace glassbox::kernels {
namespace {

constexpr int64_t kNibbleChunk = 32;  // bits 4: 16 packed bytes, decoded as 16 low then 16 high nibbles

// Where natural position k of a row lives in the prepared activations.
int64_t prepared_index(int64_t k, int64_t bits) {
  if (bits != 4) return k;
  const int64_t base = k / kNibbleChunk * kNibbleChunk, j = k - base;
  return base + (j % 2 == 0 ? j / 2 : kNibbleChunk / 2 + j / 2);
}

int code_at(const NBitsWeights& w, const uint8_t* block, int64_t i) {
  if (w.bits == 8) return block[i];
  const uint8_t byte = block[i / 2];
  return i % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
}

void matmul_nbits_scalar(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                         int64_t ldy) {
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t m = 0; m < a.M; ++m) {
      const float* am = a.data.data() + m * a.k_padded;
      float acc = 0;
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const float scale = w.scales[n * kb_count + kb], shift = -nbits_zero(w, n, kb) * scale;
        const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
        const int64_t k0 = kb * w.block_size, k_end = std::min(w.K, k0 + w.block_size);
        for (int64_t k = k0; k < k_end; ++k)
          acc += am[prepared_index(k, w.bits)] * std::fma(static_cast<float>(code_at(w, block, k - k0)), scale, shift);
      }
      Y[m * ldy + n] = acc;
    }
  }
}

bool vector_layout_supported(const NBitsWeights& w) {
  return w.bits == 8 || (w.bits == 4 && w.block_size % kNibbleChunk == 0);
}

}  // namespace

NBitsActivations prepare_nbits_activations(const float* A, int64_t M, const NBitsWeights& w) {
  NBitsActivations a;
  a.M = M;
  a.k_padded = w.k_blocks() * w.block_size;
  if (w.bits == 4) a.k_padded = (a.k_padded + kNibbleChunk - 1) / kNibbleChunk * kNibbleChunk;
  a.data.assign(static_cast<size_t>(M * a.k_padded), 0.f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < w.K; ++k) a.data[m * a.k_padded + prepared_index(k, w.bits)] = A[m * w.K + k];
  return a;
}

void dequantize_nbits_rows(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1, float* out) {
  if (nbits_form_available(NBitsForm::kAvx512, w)) return x86::dequantize_nbits_rows_avx512(w, k_padded, n0, n1, out);
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  for (int64_t n = n0; n < n1; ++n) {
    float* row = out + (n - n0) * k_padded;
    std::fill(row, row + k_padded, 0.f);
    for (int64_t kb = 0; kb < kb_count; ++kb) {
      const float scale = w.scales[n * kb_count + kb], shift = -nbits_zero(w, n, kb) * scale;
      const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
      const int64_t k0 = kb * w.block_size, k_end = std::min(w.K, k0 + w.block_size);
      for (int64_t k = k0; k < k_end; ++k)
        row[prepared_index(k, w.bits)] = std::fma(static_cast<float>(code_at(w, block, k - k0)), scale, shift);
    }
  }
}

namespace {

// Where value k of a row lives in the int8 activations (NBitsInt8Activations' layout).
int64_t int8_index(int64_t k, int64_t bits) {
  if (bits != 4) return k;
  const int64_t chunk = k / 128, j = k % 128;
  return chunk * 128 + (j % 2 == 0 ? j / 2 : 64 + j / 2);
}

}  // namespace

NBitsInt8Activations quantize_nbits_activations(const float* A, int64_t M, const NBitsWeights& w) {
  NBitsInt8Activations a;
  a.M = M;
  a.k_blocks = w.k_blocks();
  const int64_t row_bytes = a.k_blocks * w.blob(), chunks = (row_bytes + 63) / 64;
  a.row_values = chunks * (w.bits == 4 ? 128 : 64);
  a.q.assign(static_cast<size_t>(M * a.row_values), 0);
  a.scale.assign(static_cast<size_t>(M * a.k_blocks), 0.f);
  a.sum.assign(static_cast<size_t>(M * a.k_blocks), 0.f);
  for (int64_t m = 0; m < M; ++m) {
    const float* row = A + m * w.K;
    for (int64_t kb = 0; kb < a.k_blocks; ++kb) {
      const int64_t k0 = kb * w.block_size, k_end = std::min(w.K, k0 + w.block_size);
      float amax = 0.f;
      for (int64_t k = k0; k < k_end; ++k) amax = std::max(amax, std::fabs(row[k]));
      const float scale = amax / 127.f, inverse = amax != 0.f ? 127.f / amax : 0.f;
      int32_t sum = 0;
      for (int64_t k = k0; k < k_end; ++k) {
        const int32_t q = static_cast<int32_t>(std::nearbyint(row[k] * inverse));
        a.q[m * a.row_values + int8_index(k, w.bits)] = static_cast<int8_t>(std::clamp(q, -127, 127));
        sum += std::clamp(q, -127, 127);
      }
      a.scale[m * a.k_blocks + kb] = scale;
      a.sum[m * a.k_blocks + kb] = scale * static_cast<float>(sum);
    }
  }
  return a;
}

bool nbits_int8_vnni_available() { return cpu_features().int8_vnni(); }

std::vector<float> nbits_int8_as_float(const NBitsInt8Activations& a, const NBitsWeights& w) {
  std::vector<float> out(static_cast<size_t>(a.M * w.K));
  for (int64_t m = 0; m < a.M; ++m)
    for (int64_t k = 0; k < w.K; ++k)
      out[m * w.K + k] = static_cast<float>(a.q[m * a.row_values + int8_index(k, w.bits)]) * a.scale[m * a.k_blocks + k / w.block_size];
  return out;
}

void matmul_nbits_int8_form(bool vnni, const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1,
                            float* Y, int64_t ldy) {
  if (vnni && nbits_int8_vnni_available()) return x86::matmul_nbits_int8_vnni(a, w, n0, n1, Y, ldy);
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t m = 0; m < a.M; ++m) {
      const int8_t* q = a.q.data() + m * a.row_values;
      float acc = 0;
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
        const int64_t k0 = kb * w.block_size, k_end = std::min(w.K, k0 + w.block_size);
        int32_t dot = 0;
        for (int64_t k = k0; k < k_end; ++k) dot += code_at(w, block, k - k0) * q[int8_index(k, w.bits)];
        const float sb = w.scales[n * kb_count + kb];
        acc += sb * a.scale[m * kb_count + kb] * static_cast<float>(dot) - sb * nbits_zero(w, n, kb) * a.sum[m * kb_count + kb];
      }
      Y[m * ldy + n] = acc;
    }
}

void matmul_nbits_int8(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                       int64_t ldy) {
  matmul_nbits_int8_form(true, a, w, n0, n1, Y, ldy);
}

bool nbits_form_available(NBitsForm f, const NBitsWeights& w) {
  const CpuFeatures& cpu = cpu_features();
  switch (f) {
    case NBitsForm::kScalar: return true;
    case NBitsForm::kAvx2: return vector_layout_supported(w) && cpu.avx2_fma();
    case NBitsForm::kAvx512: return vector_layout_supported(w) && cpu.avx512_dq_fma();
    case NBitsForm::kAuto: return true;
  }
  return false;
}

void matmul_nbits_f32_form(NBitsForm f, const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1,
                           float* Y, int64_t ldy) {
  if (f == NBitsForm::kAuto)
    f = nbits_form_available(NBitsForm::kAvx512, w) ? NBitsForm::kAvx512
        : nbits_form_available(NBitsForm::kAvx2, w) ? NBitsForm::kAvx2
                                                    : NBitsForm::kScalar;
  if (f == NBitsForm::kAvx512 && nbits_form_available(f, w)) return x86::matmul_nbits_f32_avx512(a, w, n0, n1, Y, ldy);
  if (f == NBitsForm::kAvx2 && nbits_form_available(f, w)) return x86::matmul_nbits_f32_avx2(a, w, n0, n1, Y, ldy);
  matmul_nbits_scalar(a, w, n0, n1, Y, ldy);
}

void matmul_nbits_f32(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y, int64_t ldy) {
  matmul_nbits_f32_form(NBitsForm::kAuto, a, w, n0, n1, Y, ldy);
}

const char* matmul_nbits_implementation(const NBitsWeights& w) {
  if (nbits_form_available(NBitsForm::kAvx512, w)) return "x86/matmul_nbits_x86.cpp AVX-512";
  if (nbits_form_available(NBitsForm::kAvx2, w)) return "x86/matmul_nbits_x86.cpp AVX2";
  return "scalar loop (matmul_nbits.cpp)";
}

}  // namespace glassbox::kernels
