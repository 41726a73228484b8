// AVX-512 float32 exp / erf: the operations of vmath_avx2.cpp's exp8 / erf8, one for one
// (same constants, same fused multiply-adds, same division and rounding), 16 lanes at a
// time, so results equal the AVX2 forms bit for bit (tests/kernels VMath.Avx512MatchesAvx2).
// Compiled with target attributes, called only when the CPU reports avx512f, avx512dq
// and fma (kernels/cpu_features.h, CpuFeatures::avx512_dq_fma: the target attributes below).
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (GCC bug 105593); nothing here reads an undefined lane.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/x86/exp_avx512.h"

namespace glassbox::kernels::x86 {

bool avx512_available() { return cpu_features().avx512_dq_fma(); }

#define GB_AVX512 __attribute__((target("avx512f,avx512dq,fma")))

namespace {

GB_AVX512 inline __m512 erf16(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.f));
  const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.f), x);
  const __m512 x2 = _mm512_mul_ps(ax, ax);
  __m512 p = _mm512_set1_ps(-1.f / 1320.f);
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.f / 216.f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.f / 42.f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.f / 10.f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.f / 3.f));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(1.f));
  const __m512 small = _mm512_mul_ps(_mm512_mul_ps(p, ax), _mm512_set1_ps(1.12837916709551257f));
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.f), _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), ax, _mm512_set1_ps(1.f)));
  __m512 q = _mm512_set1_ps(1.061405429f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.453152027f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.421413741f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.284496736f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.254829592f));
  q = _mm512_mul_ps(q, t);
  const __m512 big = _mm512_fnmadd_ps(q, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x2)), _mm512_set1_ps(1.f));
  const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.5f), _CMP_LT_OQ), big, small);
  return _mm512_or_ps(r, sign);
}

}  // namespace

// Body in 16-wide vectors; the tail through masked loads and stores (lanes are independent).
#define GB_VMATH_AVX512(name, f16)                                                      \
  GB_AVX512 void name(const float* x, float* y, int64_t n) {                             \
    int64_t i = 0;                                                                       \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f16(_mm512_loadu_ps(x + i)));   \
    if (i < n) {                                                                         \
      const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);                  \
      _mm512_mask_storeu_ps(y + i, m, f16(_mm512_maskz_loadu_ps(m, x + i)));             \
    }                                                                                    \
  }

GB_VMATH_AVX512(vexp_f32_avx512, exp16)
GB_VMATH_AVX512(verf_f32_avx512, erf16)

namespace {
// GELU (erf form) as the scalar loops of kernels::gelu_erf_f32 compute it: t = x * (1/sqrt 2),
// erf, then (0.5 * x) * (1 + t) — three separately rounded operations (no fused multiply-add).
GB_AVX512 inline __m512 gelu16(__m512 x) {
  const __m512 t = erf16(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f)));
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(_mm512_set1_ps(1.f), t));
}
}  // namespace

GB_VMATH_AVX512(vgelu_erf_f32_avx512, gelu16)

#undef GB_VMATH_AVX512

}  // namespace glassbox::kernels::x86
