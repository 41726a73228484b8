// Vectorized per-tensor quantization (DynamicQuantizeLinear, QuantizeLinear):
// AVX2 with target attributes, called only when the CPU reports avx2; the
// scalar loops of quantize.h otherwise and for the tails. Results equal the
// scalar forms: the same division, round half to even (cvtps under the default
// MXCSR rounding), NaN -> the zero point, saturation to [0, 255].
#include <immintrin.h>

#include "kernels/quantize.h"

namespace glassbox::kernels {
namespace {

#define GB_AVX2 __attribute__((target("avx2")))

bool avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") != 0;
  return ok;
}

GB_AVX2 int64_t minmax_avx2(const float* x, int64_t n, float* lo, float* hi) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vlo = _mm256_min_ps(v, vlo);  // a NaN v yields the second operand: NaN is ignored
    vhi = _mm256_max_ps(v, vhi);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  for (int k = 0; k < 8; ++k) {
    *lo = std::min(*lo, l[k]);
    *hi = std::max(*hi, h[k]);
  }
  return i;
}

GB_AVX2 int64_t quantize_avx2(const float* x, int64_t n, float scale, int32_t zp, uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 big = _mm256_set1_ps(1048576.f), small = _mm256_set1_ps(-1048576.f);
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), s);
    v = _mm256_blendv_ps(v, _mm256_setzero_ps(), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));  // NaN -> 0 (-> zp)
    v = _mm256_min_ps(_mm256_max_ps(v, small), big);  // keeps cvtps in range; saturates the same
    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), z);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w, w));
  }
  return i;
}

}  // namespace

void minmax_f32(const float* x, int64_t n, float* lo, float* hi) {
  *lo = 0.f;
  *hi = 0.f;
  int64_t i = avx2() ? minmax_avx2(x, n, lo, hi) : 0;
  for (; i < n; ++i) {
    *lo = std::min(*lo, x[i]);
    *hi = std::max(*hi, x[i]);
  }
}

void quantize_f32_u8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y) {
  int64_t i = avx2() ? quantize_avx2(x, n, scale, zero_point, y) : 0;
  for (; i < n; ++i) y[i] = saturate_round<uint8_t>(x[i] / scale, zero_point);
}

}  // namespace glassbox::kernels
