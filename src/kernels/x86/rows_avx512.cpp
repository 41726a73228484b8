// AVX-512 forms of two row kernels that otherwise run as baseline (SSE2) loops: LayerNorm's
// row (layer_norm.cpp) and the scaled, masked softmax row of attention (softmax.cpp). Each does
// the operations of its scalar form in the same order — the 16-lane sums and maxima are the
// scalar code's 16 independent lanes, the lanes are reduced into the tail's scalar in lane order,
// every multiply and add is rounded on its own (this file is compiled with -ffp-contract=off,
// src/kernels/CMakeLists.txt) — so the results equal the scalar forms bit for bit
// (tests/ops_math RowsAvx512.*). Called only when the CPU reports avx512f and avx512dq.
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (GCC bug 105593); nothing here reads an undefined lane.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/x86/exp_avx512.h"

namespace glassbox::kernels::x86 {

#define GB_AVX512 __attribute__((target("avx512f,avx512dq,fma")))

namespace {

constexpr int kLanes = 16;

// The scalar forms' "for (l) s += acc[l]" after the tail.
GB_AVX512 inline float add_lanes(__m512 acc, float s) {
  alignas(64) float a[kLanes];
  _mm512_store_ps(a, acc);
  for (int l = 0; l < kLanes; ++l) s += a[l];
  return s;
}

}  // namespace

// layer_norm.cpp's row: shift-centred mean, centred squares, then ((x - mean) * inv) * gamma + beta.
GB_AVX512 void layer_norm_row_avx512(const float* x, int64_t n, const float* gamma, const float* beta, float eps,
                                     float* y) {
  const float shift = x[0];
  const int64_t full = n / kLanes * kLanes;
  __m512 acc = _mm512_setzero_ps();
  const __m512 vshift = _mm512_set1_ps(shift);
  for (int64_t i = 0; i < full; i += kLanes) acc = _mm512_add_ps(acc, _mm512_sub_ps(_mm512_loadu_ps(x + i), vshift));
  float s = 0;
  for (int64_t i = full; i < n; ++i) s += x[i] - shift;
  const float mean = shift + add_lanes(acc, s) / static_cast<float>(n);
  const __m512 vmean = _mm512_set1_ps(mean);
  acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < full; i += kLanes) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), vmean);
    acc = _mm512_add_ps(acc, _mm512_mul_ps(d, d));
  }
  float q = 0;
  for (int64_t i = full; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
  const float var = add_lanes(acc, q) / static_cast<float>(n);
  const float inv = 1.f / std::sqrt(var + eps);
  const __m512 vinv = _mm512_set1_ps(inv);
  for (int64_t i = 0; i < full; i += kLanes) {
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmean), vinv);
    _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_mul_ps(t, _mm512_loadu_ps(gamma + i)), _mm512_loadu_ps(beta + i)));
  }
  for (int64_t i = full; i < n; ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

// softmax.cpp's scaled_masked_softmax_row_f32 (kSoftmax): y = x * scale + mask, its 16-lane
// maximum m (NaN skipped: max_ps(y, acc) is y > acc ? y : acc), y = exp(y - m) with its 16-lane
// sum, y *= 1 / sum — three passes instead of six.
GB_AVX512 void scaled_masked_softmax_row_avx512(const float* x, const float* mask, int64_t mask_stride, float* y,
                                                int64_t n, float scale) {
  const int64_t full = n / kLanes * kLanes;
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 vmask0 = _mm512_set1_ps(mask[0]);
  __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t k = 0; k < full; k += kLanes) {
    const __m512 mk = mask_stride == 1 ? _mm512_loadu_ps(mask + k) : vmask0;
    const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x + k), vscale), mk);
    _mm512_storeu_ps(y + k, v);
    vmax = _mm512_max_ps(v, vmax);
  }
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t k = full; k < n; ++k) {
    y[k] = x[k] * scale + mask[mask_stride == 1 ? k : 0];
    m = y[k] > m ? y[k] : m;
  }
  alignas(64) float lanes[kLanes];
  _mm512_store_ps(lanes, vmax);
  for (int l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  if (std::isinf(m) && m < 0) m = 0;  // all -inf row: avoid inf - inf
  const __m512 vm = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t k = 0; k < full; k += kLanes) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(y + k), vm));
    _mm512_storeu_ps(y + k, e);
    acc = _mm512_add_ps(acc, e);
  }
  float s = 0.f;
  if (full < n) {
    const __mmask16 t = static_cast<__mmask16>((1u << (n - full)) - 1u);
    _mm512_mask_storeu_ps(y + full, t, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, y + full), vm)));
    for (int64_t k = full; k < n; ++k) s += y[k];
  }
  const float inv = 1.f / add_lanes(acc, s);
  const __m512 vinv = _mm512_set1_ps(inv);
  for (int64_t k = 0; k < full; k += kLanes) _mm512_storeu_ps(y + k, _mm512_mul_ps(_mm512_loadu_ps(y + k), vinv));
  for (int64_t k = full; k < n; ++k) y[k] *= inv;
}

#undef GB_AVX512

}  // namespace glassbox::kernels::x86
