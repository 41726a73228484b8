// AVX2+FMA float32 exp / tanh / erf / sigmoid. Compiled with target
// attributes (no global -mavx2), called only when the CPU reports avx2 and fma
// (kernels/cpu_features.h, CpuFeatures::avx2_fma).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu_features.h"

namespace glassbox::kernels::x86 {

bool avx2_available() { return cpu_features().avx2_fma(); }

#define GB_AVX2 __attribute__((target("avx2,fma")))

namespace {

// exp: x = n ln2 + r, |r| <= ln2/2, e^r by a degree-6 polynomial, 2^n via the exponent bits.
GB_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f), lo = _mm256_set1_ps(-87.3365478515625f);
  const __m256 nan_mask = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), under);
  return _mm256_blendv_ps(y, x, nan_mask);
}

GB_AVX2 inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.f));
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.f), x);
  // |x| < 0.3: odd Taylor series to x^9 (error < 2e-8).
  const __m256 x2 = _mm256_mul_ps(ax, ax);
  __m256 p = _mm256_set1_ps(62.f / 2835.f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-17.f / 315.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.f / 15.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.f / 3.f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), ax, ax);
  // otherwise 1 - 2 / (exp(2|x|) + 1); exp overflow gives exactly 1.
  const __m256 e = exp8(_mm256_add_ps(ax, ax));
  const __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.f),
                                   _mm256_div_ps(_mm256_set1_ps(2.f), _mm256_add_ps(e, _mm256_set1_ps(1.f))));
  const __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.3f), _CMP_LT_OQ));
  return _mm256_or_ps(r, sign);  // NaN stays NaN through both paths
}

GB_AVX2 inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.f));
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.f), x);
  const __m256 x2 = _mm256_mul_ps(ax, ax);
  // |x| < 0.5: 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320).
  __m256 p = _mm256_set1_ps(-1.f / 1320.f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.f / 216.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.f / 42.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.f / 10.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.f / 3.f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.f));
  const __m256 small = _mm256_mul_ps(_mm256_mul_ps(p, ax), _mm256_set1_ps(1.12837916709551257f));
  // otherwise Abramowitz-Stegun 7.1.26: 1 - poly(t) exp(-x^2), t = 1 / (1 + 0.3275911 x).
  const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), ax, _mm256_set1_ps(1.f)));
  __m256 q = _mm256_set1_ps(1.061405429f);
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.453152027f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.421413741f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.284496736f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.254829592f));
  q = _mm256_mul_ps(q, t);
  const __m256 big = _mm256_fnmadd_ps(q, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x2)), _mm256_set1_ps(1.f));
  const __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
  return _mm256_or_ps(r, sign);
}

GB_AVX2 inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

}  // namespace

// Body in 8-wide vectors; the tail goes through a padded vector with the same math.
#define GB_VMATH_AVX2(name, f8)                                               \
  GB_AVX2 void name(const float* x, float* y, int64_t n) {                     \
    int64_t i = 0;                                                             \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f8(_mm256_loadu_ps(x + i))); \
    if (i < n) {                                                               \
      alignas(32) float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};                     \
      for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];                       \
      _mm256_store_ps(buf, f8(_mm256_load_ps(buf)));                           \
      for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];                       \
    }                                                                          \
  }

GB_VMATH_AVX2(vexp_f32_avx2, exp8)
GB_VMATH_AVX2(vtanh_f32_avx2, tanh8)
GB_VMATH_AVX2(verf_f32_avx2, erf8)
GB_VMATH_AVX2(vsigmoid_f32_avx2, sigmoid8)

#undef GB_VMATH_AVX2

}  // namespace glassbox::kernels::x86
