// exp on 16 float32 lanes (the AVX2 exp8 of vmath_avx2.cpp, operation for operation), shared by
// vmath_avx512.cpp and rows_avx512.cpp. Include only from files whose callers check avx512f/avx512dq.
#pragma once

#include <immintrin.h>

#include <cmath>

namespace glassbox::kernels::x86 {

__attribute__((target("avx512f,avx512dq,fma"))) inline __m512 exp16(__m512 x) {
  const __m512 hi = _mm512_set1_ps(88.3762626647949f), lo = _mm512_set1_ps(-87.3365478515625f);
  const __mmask16 nan_mask = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __mmask16 over = _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ);
  const __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  // n is integral and within [-126, 128] after the clamp: the conversion is exact in any rounding mode.
  const __m512i e = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvt_roundps_epi32(n, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), _mm512_set1_epi32(127)),
      23);
  __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  y = _mm512_mask_blend_ps(over, y, _mm512_set1_ps(INFINITY));
  y = _mm512_mask_blend_ps(under, y, _mm512_setzero_ps());
  return _mm512_mask_blend_ps(nan_mask, y, x);
}

}  // namespace glassbox::kernels::x86
