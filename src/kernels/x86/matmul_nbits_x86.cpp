// AVX-512 and AVX2 forms of matmul_nbits_f32 (kernels/matmul_nbits.h): each weight row is read
// once from its packed codes and decoded block by block in registers — bytes widened to 32-bit
// lanes, the low and high nibbles split by a mask and a shift (bits 4), converted to float and
// dequantized as fma(code, scale, -zero * scale) — then multiplied into up to kRows rows of the
// prepared activations (whose bits-4 layout puts each 32 values' even then odd positions where
// the low and high nibbles land). Bits 4 need block_size % 32 == 0, bits 8 any block_size >= 16
// (matmul_nbits.cpp dispatches; the scalar form covers the rest).
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (GCC bug 105593); nothing here reads an undefined lane.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>

#include "kernels/matmul_nbits.h"

namespace glassbox::kernels::x86 {

#define GB_NB_AVX512 __attribute__((target("avx512f,avx512dq,fma")))
#define GB_NB_AVX2 __attribute__((target("avx2,fma")))

namespace {

constexpr int kRows = 4;  // activation rows per pass over a weight row (2 accumulators each)

struct BlockScale {
  float scale, shift;
};

inline BlockScale block_scale(const NBitsWeights& w, int64_t n, int64_t kb, int64_t kb_count) {
  const float s = w.scales[n * kb_count + kb];
  return {s, -nbits_zero(w, n, kb) * s};
}

GB_NB_AVX512 inline float sum512(__m512 v) { return _mm512_reduce_add_ps(v); }

// One weight row n against R activation rows starting at a0 (stride kp).
template <int R>
GB_NB_AVX512 void row_avx512(const NBitsWeights& w, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  __m512 lo_acc[R], hi_acc[R];
  for (int r = 0; r < R; ++r) lo_acc[r] = hi_acc[r] = _mm512_setzero_ps();
  const __m512i nibble = _mm512_set1_epi32(0x0F);
  for (int64_t kb = 0; kb < kb_count; ++kb) {
    const BlockScale bs = block_scale(w, n, kb, kb_count);
    const __m512 vs = _mm512_set1_ps(bs.scale), vsh = _mm512_set1_ps(bs.shift);
    const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
    const float* a = a0 + kb * w.block_size;
    if (w.bits == 4) {
      for (int64_t c = 0; c < w.block_size; c += 32) {
        const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + c / 2)));
        const __m512 lo = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, nibble)), vs, vsh);
        const __m512 hi = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)), vs, vsh);
        for (int r = 0; r < R; ++r) {
          lo_acc[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(a + r * kp + c), lo_acc[r]);
          hi_acc[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(a + r * kp + c + 16), hi_acc[r]);
        }
      }
    } else {
      for (int64_t c = 0; c < w.block_size; c += 16) {
        const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + c)));
        const __m512 wv = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), vs, vsh);
        for (int r = 0; r < R; ++r) {
          __m512& acc = (c / 16) % 2 == 0 ? lo_acc[r] : hi_acc[r];
          acc = _mm512_fmadd_ps(wv, _mm512_loadu_ps(a + r * kp + c), acc);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) y[r * ldy + n] = sum512(_mm512_add_ps(lo_acc[r], hi_acc[r]));
}

GB_NB_AVX2 inline float sum256(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

template <int R>
GB_NB_AVX2 void row_avx2(const NBitsWeights& w, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  __m256 lo_acc[R], hi_acc[R];
  for (int r = 0; r < R; ++r) lo_acc[r] = hi_acc[r] = _mm256_setzero_ps();
  const __m256i nibble = _mm256_set1_epi32(0x0F);
  for (int64_t kb = 0; kb < kb_count; ++kb) {
    const BlockScale bs = block_scale(w, n, kb, kb_count);
    const __m256 vs = _mm256_set1_ps(bs.scale), vsh = _mm256_set1_ps(bs.shift);
    const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
    const float* a = a0 + kb * w.block_size;
    if (w.bits == 4) {
      for (int64_t c = 0; c < w.block_size; c += 32) {
        for (int half = 0; half < 2; ++half) {  // bytes 0-7 then 8-15: even/odd positions 0-7 then 8-15
          const __m256i v =
              _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + c / 2 + 8 * half)));
          const __m256 lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, nibble)), vs, vsh);
          const __m256 hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), vs, vsh);
          for (int r = 0; r < R; ++r) {
            lo_acc[r] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(a + r * kp + c + 8 * half), lo_acc[r]);
            hi_acc[r] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(a + r * kp + c + 16 + 8 * half), hi_acc[r]);
          }
        }
      }
    } else {
      for (int64_t c = 0; c < w.block_size; c += 8) {
        const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + c)));
        const __m256 wv = _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), vs, vsh);
        for (int r = 0; r < R; ++r) {
          __m256& acc = (c / 8) % 2 == 0 ? lo_acc[r] : hi_acc[r];
          acc = _mm256_fmadd_ps(wv, _mm256_loadu_ps(a + r * kp + c), acc);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) y[r * ldy + n] = sum256(_mm256_add_ps(lo_acc[r], hi_acc[r]));
}

// Rows of A in groups of kRows (then the remainder) for every weight row.
template <void (*F1)(const NBitsWeights&, int64_t, const float*, int64_t, float*, int64_t),
          void (*F2)(const NBitsWeights&, int64_t, const float*, int64_t, float*, int64_t),
          void (*F3)(const NBitsWeights&, int64_t, const float*, int64_t, float*, int64_t),
          void (*F4)(const NBitsWeights&, int64_t, const float*, int64_t, float*, int64_t)>
void run_rows(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y, int64_t ldy) {
  for (int64_t m0 = 0; m0 < a.M; m0 += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, a.M - m0);
    const float* a0 = a.data.data() + m0 * a.k_padded;
    float* y = Y + m0 * ldy;
    for (int64_t n = n0; n < n1; ++n) {
      switch (rows) {
        case 1: F1(w, n, a0, a.k_padded, y, ldy); break;
        case 2: F2(w, n, a0, a.k_padded, y, ldy); break;
        case 3: F3(w, n, a0, a.k_padded, y, ldy); break;
        default: F4(w, n, a0, a.k_padded, y, ldy); break;
      }
    }
  }
}

}  // namespace

void matmul_nbits_f32_avx512(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                             int64_t ldy) {
  run_rows<row_avx512<1>, row_avx512<2>, row_avx512<3>, row_avx512<4>>(a, w, n0, n1, Y, ldy);
}

void matmul_nbits_f32_avx2(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                           int64_t ldy) {
  run_rows<row_avx2<1>, row_avx2<2>, row_avx2<3>, row_avx2<4>>(a, w, n0, n1, Y, ldy);
}

// Decoded rows for the GEMM path: the same decode as row_avx512, stored (prepared order).
GB_NB_AVX512 void dequantize_nbits_rows_avx512(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1,
                                               float* out) {
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  const __m512i nibble = _mm512_set1_epi32(0x0F);
  for (int64_t n = n0; n < n1; ++n) {
    float* row = out + (n - n0) * k_padded;
    for (int64_t kb = 0; kb < kb_count; ++kb) {
      const BlockScale bs = block_scale(w, n, kb, kb_count);
      const __m512 vs = _mm512_set1_ps(bs.scale), vsh = _mm512_set1_ps(bs.shift);
      const uint8_t* block = w.codes + (n * kb_count + kb) * blob;
      float* dst = row + kb * w.block_size;
      const int64_t step = w.bits == 4 ? 32 : 16;
      for (int64_t c = 0; c < w.block_size; c += step) {
        const __m512i v =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + (w.bits == 4 ? c / 2 : c))));
        if (w.bits == 8) {
          _mm512_storeu_ps(dst + c, _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), vs, vsh));
          continue;
        }
        _mm512_storeu_ps(dst + c, _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, nibble)), vs, vsh));
        _mm512_storeu_ps(dst + c + 16, _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)), vs, vsh));
      }
    }
    for (int64_t k = kb_count * w.block_size; k < k_padded; ++k) row[k] = 0.f;
  }
}

}  // namespace glassbox::kernels::x86
