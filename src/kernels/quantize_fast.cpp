// Vectorized per-tensor quantization (DynamicQuantizeLinear, QuantizeLinear, the
// int8-dynamic rows): AVX-512 / AVX2 with target attributes, called only when the CPU
// reports them; the
// scalar loops of quantize.h otherwise and for the tails. Results equal the
// scalar forms: the same division, round half to even (cvtps under the default
// MXCSR rounding), NaN -> the zero point, saturation to [0, 255].
#include "kernels/cpu_features.h"

#if GLASSBOX_KERNELS_X86
#include <immintrin.h>
#endif

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (GCC bug 105593); nothing here reads an undefined lane.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/quantize.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

#if GLASSBOX_KERNELS_X86
#define GB_AVX2 __attribute__((target("avx2")))

bool avx2() {
  return cpu_features().avx2;
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
    v = _mm256_min_ps(_mm256_max_ps(v, small), big);  // in range for cvtps, saturating the same;
    // max_ps returns its second operand for a NaN v: small, which saturates to 0 (saturate_round's NaN rule)
    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), z);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w, w));
  }
  return i;
}

// AVX-512 forms of the two loops above (16 lanes; same min/max, division, rounding and
// saturation: clamping to [0, 255] then truncating equals packs_epi32 + packus_epi16).
#define GB_AVX512 __attribute__((target("avx512f,avx512bw")))

bool avx512() {
  return cpu_features().avx512_bw();
}

// Four independent accumulator pairs (the min/max chain's latency, not the loads, bounded the
// single-pair loop). The result does not depend on the order: every accumulator starts at +0 and
// takes a value only when strictly smaller (larger), so ties — +0 against -0 included — keep +0.
GB_AVX512 int64_t minmax_avx512(const float* x, int64_t n, float* lo, float* hi) {
  __m512 vlo = _mm512_setzero_ps(), vhi = _mm512_setzero_ps();
  int64_t i = 0;
  if (n >= 64) {
    __m512 lo1 = vlo, lo2 = vlo, lo3 = vlo, hi1 = vhi, hi2 = vhi, hi3 = vhi;
    for (; i + 64 <= n; i += 64) {
      const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16), c = _mm512_loadu_ps(x + i + 32),
                   d = _mm512_loadu_ps(x + i + 48);
      vlo = _mm512_min_ps(a, vlo);  // a NaN in the first operand yields the second: NaN is ignored
      lo1 = _mm512_min_ps(b, lo1);
      lo2 = _mm512_min_ps(c, lo2);
      lo3 = _mm512_min_ps(d, lo3);
      vhi = _mm512_max_ps(a, vhi);
      hi1 = _mm512_max_ps(b, hi1);
      hi2 = _mm512_max_ps(c, hi2);
      hi3 = _mm512_max_ps(d, hi3);
    }
    vlo = _mm512_min_ps(_mm512_min_ps(lo1, vlo), _mm512_min_ps(lo3, lo2));
    vhi = _mm512_max_ps(_mm512_max_ps(hi1, vhi), _mm512_max_ps(hi3, hi2));
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  alignas(64) float l[16], h[16];
  _mm512_store_ps(l, vlo);
  _mm512_store_ps(h, vhi);
  for (int k = 0; k < 16; ++k) {
    *lo = std::min(*lo, l[k]);
    *hi = std::max(*hi, h[k]);
  }
  return i;
}

GB_AVX512 int64_t quantize_avx512(const float* x, int64_t n, float scale, int32_t zp, uint8_t* y) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512 big = _mm512_set1_ps(1048576.f), small = _mm512_set1_ps(-1048576.f);
  const __m512i z = _mm512_set1_epi32(zp), q_lo = _mm512_setzero_si512(), q_hi = _mm512_set1_epi32(255);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), s);
    v = _mm512_min_ps(_mm512_max_ps(v, small), big);  // in range for cvtps, saturating the same;
    // max_ps returns its second operand for a NaN v: small, which saturates to 0 (saturate_round's NaN rule)
    __m512i q = _mm512_add_epi32(_mm512_cvt_roundps_epi32(v, _MM_FROUND_CUR_DIRECTION), z);
    q = _mm512_min_epi32(_mm512_max_epi32(q, q_lo), q_hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi32_epi8(q));
  }
  return i;
}
#else
// Not x86: no vector form here; each "elements done" is 0 and the scalar loops below do all.
constexpr bool avx2() { return false; }
constexpr bool avx512() { return false; }
int64_t minmax_avx2(const float*, int64_t, float*, float*) { return 0; }
int64_t quantize_avx2(const float*, int64_t, float, int32_t, uint8_t*) { return 0; }
int64_t minmax_avx512(const float*, int64_t, float*, float*) { return 0; }
int64_t quantize_avx512(const float*, int64_t, float, int32_t, uint8_t*) { return 0; }
#endif

}  // namespace

void minmax_f32(const float* x, int64_t n, float* lo, float* hi) {
  *lo = 0.f;
  *hi = 0.f;
  int64_t i = avx512() ? minmax_avx512(x, n, lo, hi) : avx2() ? minmax_avx2(x, n, lo, hi) : 0;
  for (; i < n; ++i) {
    *lo = std::min(*lo, x[i]);
    *hi = std::max(*hi, x[i]);
  }
}

void quantize_f32_u8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y) {
  int64_t i = avx512() ? quantize_avx512(x, n, scale, zero_point, y) : 0;
  if (avx2()) i += quantize_avx2(x + i, n - i, scale, zero_point, y + i);
  for (; i < n; ++i) y[i] = saturate_round<uint8_t>(x[i] / scale, zero_point);
}

namespace {

// The chunks of the *_parallel forms: [at(c), at(c) + len(c)) for c < count (the rounding to
// 64 may leave the last chunk empty).
struct Chunks {
  int64_t n, count, size;
  Chunks(int64_t n_, ThreadPool* pool) : n(n_) {
    count = std::clamp<int64_t>(n / 16384, 1, pool ? pool->size() : 1);
    size = ((n + count - 1) / count + 63) / 64 * 64;
  }
  int64_t at(int64_t c) const { return std::min(c * size, n); }
  int64_t len(int64_t c) const { return std::min(size, n - at(c)); }
  template <class Body>
  void run(ThreadPool* pool, Body&& body) const {
    auto chunks = [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) body(c);
    };
    if (pool && count > 1) pool->parallel_for(count, 1, chunks);
    else chunks(0, count);
  }
};

}  // namespace

void minmax_f32_parallel(const float* x, int64_t n, float* lo, float* hi, ThreadPool* pool) {
  const Chunks ch(n, pool);
  std::vector<float> los(static_cast<size_t>(ch.count), 0.f), his(los.size(), 0.f);
  ch.run(pool, [&](int64_t c) { minmax_f32(x + ch.at(c), ch.len(c), &los[static_cast<size_t>(c)], &his[static_cast<size_t>(c)]); });
  *lo = *std::min_element(los.begin(), los.end());
  *hi = *std::max_element(his.begin(), his.end());
}

void minmax_f32_onnxruntime_order(const float* x, int64_t n, float* lo, float* hi) {
  const auto vmax = [](float a, float b) { return a > b ? a : b; };  // one lane of max_ps(a, b)
  const auto vmin = [](float a, float b) { return a < b ? a : b; };  // one lane of min_ps(a, b)
  float mx = std::numeric_limits<float>::lowest(), mn = std::numeric_limits<float>::max();
  int64_t i = 0;
  if (n >= 8) {
    float M[4][8], m[4][8];
    for (int v = 0; v < 4; ++v)
      for (int l = 0; l < 8; ++l) M[v][l] = mx, m[v][l] = mn;
    if (n >= 32) {
      for (; n - i >= 32; i += 32)
        for (int v = 0; v < 4; ++v)
          for (int l = 0; l < 8; ++l) {
            M[v][l] = vmax(M[v][l], x[i + 8 * v + l]);
            m[v][l] = vmin(m[v][l], x[i + 8 * v + l]);
          }
      for (int l = 0; l < 8; ++l) {
        M[0][l] = vmax(vmax(M[0][l], M[1][l]), vmax(M[2][l], M[3][l]));
        m[0][l] = vmin(vmin(m[0][l], m[1][l]), vmin(m[2][l], m[3][l]));
      }
    }
    for (; n - i >= 8; i += 8)
      for (int l = 0; l < 8; ++l) {
        M[0][l] = vmax(M[0][l], x[i + l]);
        m[0][l] = vmin(m[0][l], x[i + l]);
      }
    float tM[4], tm[4];  // the two 128-bit halves, then lanes (0,2) and (1,3), then the two
    for (int l = 0; l < 4; ++l) tM[l] = vmax(M[0][l], M[0][l + 4]), tm[l] = vmin(m[0][l], m[0][l + 4]);
    mx = vmax(vmax(tM[0], tM[2]), vmax(tM[1], tM[3]));
    mn = vmin(vmin(tm[0], tm[2]), vmin(tm[1], tm[3]));
  }
  for (; i < n; ++i) {
    mx = std::max(mx, x[i]);
    mn = std::min(mn, x[i]);
  }
  *lo = std::min(mn, 0.f);
  *hi = std::max(mx, 0.f);
}

bool any_nan_f32(const float* x, int64_t n) {
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) nan |= x[i] != x[i];
  return nan;
}

void quantize_f32_u8_parallel(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y, ThreadPool* pool) {
  const Chunks ch(n, pool);
  ch.run(pool, [&](int64_t c) { quantize_f32_u8(x + ch.at(c), ch.len(c), scale, zero_point, y + ch.at(c)); });
}

}  // namespace glassbox::kernels
