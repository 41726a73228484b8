// AVX-512 and AVX2 forms of matmul_nbits_f32 (kernels/matmul_nbits.h): each weight row is read
// once from its packed codes and decoded block by block in registers — bytes widened to 32-bit
// lanes; AVX-512 bits 4: each nibble picks its weight from the block's 16 dequantized values
// (fma(code, scale, -zero * scale), one vpermps each); otherwise the nibbles (or bytes) are
// converted to float and dequantized the same way — then multiplied into up to kRows rows of the
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

enum class Zero { kDefault, kPacked, kFloat };  // which zero points the weights carry (templated: no branch per block)

// The weights' per-row sizes, derived once per call (not per row: each is an integer division).
struct Geometry {
  int64_t kb_count, blob, bs, zp_row;
  explicit Geometry(const NBitsWeights& w)
      : kb_count(w.k_blocks()), blob(w.blob()), bs(w.block_size), zp_row((w.k_blocks() * w.bits + 7) / 8) {}
};

// Row n's scales and zero points, read per block without re-deriving the row's offsets.
template <int Bits, Zero Z>
struct RowScales {
  const float* scales;
  const float* zero_float = nullptr;
  const uint8_t* zero_packed = nullptr;
  RowScales(const NBitsWeights& w, const Geometry& g, int64_t n) : scales(w.scales + n * g.kb_count) {
    if constexpr (Z == Zero::kFloat) zero_float = w.zero_float + n * g.kb_count;
    if constexpr (Z == Zero::kPacked) zero_packed = w.zero_packed + n * g.zp_row;
  }
  float zero(int64_t kb) const {
    if constexpr (Z == Zero::kDefault) return static_cast<float>(1 << (Bits - 1));
    if constexpr (Z == Zero::kFloat) return zero_float[kb];
    if constexpr (Bits == 8) return static_cast<float>(zero_packed[kb]);
    const uint8_t byte = zero_packed[kb / 2];
    return static_cast<float>(kb % 2 == 0 ? byte & 0x0F : byte >> 4);
  }
  float shift(int64_t kb) const { return -zero(kb) * scales[kb]; }  // fma(code, scale, shift) = the weight
};

GB_NB_AVX512 inline float sum512(__m512 v) { return _mm512_reduce_add_ps(v); }

// 16 bits-8 codes as weights.
GB_NB_AVX512 inline __m512 decode8_avx512(const uint8_t* p, __m512 vs, __m512 vsh) {
  const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), vs, vsh);
}

// The 16 weights of a bits-4 block by code: iota = 0..15.
GB_NB_AVX512 inline __m512 q4_table(__m512 iota, float scale, float shift) {
  return _mm512_fmadd_ps(iota, _mm512_set1_ps(scale), _mm512_set1_ps(shift));
}

// One bits-4 block of a weight row into R activation rows' accumulators. tbl holds the block's 16 weights by
// code, fma(code, scale, -zero * scale) as every form dequantizes; each 32-bit lane of the widened code bytes
// picks its low-nibble weight with vpermps (which reads an index's low 4 bits only) and its high-nibble one
// after a shift: two shuffles where the arithmetic decode took a mask, a shift, two conversions and two FMAs.
template <int R>
GB_NB_AVX512 inline void q4_block_avx512(const uint8_t* block, const float* a, int64_t kp, int64_t bs, __m512 tbl,
                                         __m512 (&lo_acc)[R], __m512 (&hi_acc)[R]) {
  for (int64_t c = 0; c < bs; c += 32) {
    const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + c / 2)));
    const __m512 lo = _mm512_permutexvar_ps(v, tbl);
    const __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), tbl);
    for (int r = 0; r < R; ++r) {
      lo_acc[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(a + r * kp + c), lo_acc[r]);
      hi_acc[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(a + r * kp + c + 16), hi_acc[r]);
    }
  }
}

// One weight row n against R activation rows starting at a0 (stride kp). Bits 4: blocks alternate between two
// sets of accumulators (two FMA chains per activation row half would wait on each other's latency at R = 1).
template <int Bits, Zero Z, int R>
GB_NB_AVX512 void row_avx512(const NBitsWeights& w, const Geometry& g, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
  const int64_t kb_count = g.kb_count, blob = g.blob, bs = g.bs;
  const RowScales<Bits, Z> rs(w, g, n);
  const uint8_t* codes = w.codes + n * kb_count * blob;
  __m512 lo_acc[R], hi_acc[R];
  for (int r = 0; r < R; ++r) lo_acc[r] = hi_acc[r] = _mm512_setzero_ps();
  if constexpr (Bits == 4) {
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512 lo2[R], hi2[R];
    for (int r = 0; r < R; ++r) lo2[r] = hi2[r] = _mm512_setzero_ps();
    int64_t kb = 0;
    for (; kb + 2 <= kb_count; kb += 2) {
      q4_block_avx512<R>(codes + kb * blob, a0 + kb * bs, kp, bs, q4_table(iota, rs.scales[kb], rs.shift(kb)), lo_acc, hi_acc);
      q4_block_avx512<R>(codes + (kb + 1) * blob, a0 + (kb + 1) * bs, kp, bs, q4_table(iota, rs.scales[kb + 1], rs.shift(kb + 1)), lo2, hi2);
    }
    if (kb < kb_count) q4_block_avx512<R>(codes + kb * blob, a0 + kb * bs, kp, bs, q4_table(iota, rs.scales[kb], rs.shift(kb)), lo_acc, hi_acc);
    for (int r = 0; r < R; ++r) {
      lo_acc[r] = _mm512_add_ps(lo_acc[r], lo2[r]);
      hi_acc[r] = _mm512_add_ps(hi_acc[r], hi2[r]);
    }
  } else {
    for (int64_t kb = 0; kb < kb_count; ++kb) {
      const __m512 vs = _mm512_set1_ps(rs.scales[kb]), vsh = _mm512_set1_ps(rs.shift(kb));
      const uint8_t* block = codes + kb * blob;
      const float* a = a0 + kb * bs;
      // 32 codes per step into the two accumulators (no runtime choice of accumulator: they stay in
      // registers), then block 16's single half.
      int64_t c = 0;
      for (; c + 32 <= bs; c += 32) {
        const __m512 w0 = decode8_avx512(block + c, vs, vsh), w1 = decode8_avx512(block + c + 16, vs, vsh);
        for (int r = 0; r < R; ++r) {
          lo_acc[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(a + r * kp + c), lo_acc[r]);
          hi_acc[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(a + r * kp + c + 16), hi_acc[r]);
        }
      }
      if (c < bs) {
        const __m512 w0 = decode8_avx512(block + c, vs, vsh);
        for (int r = 0; r < R; ++r) lo_acc[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(a + r * kp + c), lo_acc[r]);
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

// 8 bits-8 codes as weights.
GB_NB_AVX2 inline __m256 decode8_avx2(const uint8_t* p, __m256 vs, __m256 vsh) {
  const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), vs, vsh);
}

template <int Bits, Zero Z, int R>
GB_NB_AVX2 void row_avx2(const NBitsWeights& w, const Geometry& g, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
  const int64_t kb_count = g.kb_count, blob = g.blob, bs = g.bs;
  const RowScales<Bits, Z> rs(w, g, n);
  const uint8_t* codes = w.codes + n * kb_count * blob;
  __m256 lo_acc[R], hi_acc[R];
  for (int r = 0; r < R; ++r) lo_acc[r] = hi_acc[r] = _mm256_setzero_ps();
  const __m256i nibble = _mm256_set1_epi32(0x0F);
  for (int64_t kb = 0; kb < kb_count; ++kb) {
    const __m256 vs = _mm256_set1_ps(rs.scales[kb]), vsh = _mm256_set1_ps(rs.shift(kb));
    const uint8_t* block = codes + kb * blob;
    const float* a = a0 + kb * bs;
    if constexpr (Bits == 4) {
      for (int64_t c = 0; c < bs; c += 32) {
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
      for (int64_t c = 0; c < bs; c += 16) {  // block_size >= 16: 16 codes per step, two accumulators
        const __m256 w0 = decode8_avx2(block + c, vs, vsh), w1 = decode8_avx2(block + c + 8, vs, vsh);
        for (int r = 0; r < R; ++r) {
          lo_acc[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(a + r * kp + c), lo_acc[r]);
          hi_acc[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(a + r * kp + c + 8), hi_acc[r]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) y[r * ldy + n] = sum256(_mm256_add_ps(lo_acc[r], hi_acc[r]));
}

using RowFn = void (*)(const NBitsWeights&, const Geometry&, int64_t, const float*, int64_t, float*, int64_t);

// Rows of A in groups of kRows (then the remainder) for every weight row; fns[r - 1] handles r rows.
void run_rows(const RowFn (&fns)[kRows], const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1,
              float* Y, int64_t ldy) {
  const Geometry g(w);
  for (int64_t m0 = 0; m0 < a.M; m0 += kRows) {
    const RowFn f = fns[std::min<int64_t>(kRows, a.M - m0) - 1];
    const float* a0 = a.data.data() + m0 * a.k_padded;
    float* y = Y + m0 * ldy;
    for (int64_t n = n0; n < n1; ++n) f(w, g, n, a0, a.k_padded, y, ldy);
  }
}

template <template <int, Zero, int> class Row, int Bits, Zero Z>
struct Rows {
  static constexpr RowFn fns[kRows] = {Row<Bits, Z, 1>::f, Row<Bits, Z, 2>::f, Row<Bits, Z, 3>::f, Row<Bits, Z, 4>::f};
};

template <int Bits, Zero Z, int R>
struct Avx512Row {
  static void f(const NBitsWeights& w, const Geometry& g, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
    row_avx512<Bits, Z, R>(w, g, n, a0, kp, y, ldy);
  }
};
template <int Bits, Zero Z, int R>
struct Avx2Row {
  static void f(const NBitsWeights& w, const Geometry& g, int64_t n, const float* a0, int64_t kp, float* y, int64_t ldy) {
    row_avx2<Bits, Z, R>(w, g, n, a0, kp, y, ldy);
  }
};

// The row functions for these weights' bits and zero points.
template <template <int, Zero, int> class Row>
const RowFn (&row_fns(const NBitsWeights& w))[kRows] {
  const Zero z = w.zero_float ? Zero::kFloat : w.zero_packed ? Zero::kPacked : Zero::kDefault;
  if (w.bits == 4)
    return z == Zero::kFloat ? Rows<Row, 4, Zero::kFloat>::fns : z == Zero::kPacked ? Rows<Row, 4, Zero::kPacked>::fns
                                                                                    : Rows<Row, 4, Zero::kDefault>::fns;
  return z == Zero::kFloat ? Rows<Row, 8, Zero::kFloat>::fns : z == Zero::kPacked ? Rows<Row, 8, Zero::kPacked>::fns
                                                                                  : Rows<Row, 8, Zero::kDefault>::fns;
}

}  // namespace

void matmul_nbits_f32_avx512(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                             int64_t ldy) {
  run_rows(row_fns<Avx512Row>(w), a, w, n0, n1, Y, ldy);
}

void matmul_nbits_f32_avx2(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                           int64_t ldy) {
  run_rows(row_fns<Avx2Row>(w), a, w, n0, n1, Y, ldy);
}

// Decoded rows for the GEMM path: the same decode as row_avx512, stored (prepared order).
GB_NB_AVX512 void dequantize_nbits_rows_avx512(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1,
                                               float* out) {
  const int64_t kb_count = w.k_blocks(), blob = w.blob();
  const __m512i nibble = _mm512_set1_epi32(0x0F);
  for (int64_t n = n0; n < n1; ++n) {
    float* row = out + (n - n0) * k_padded;
    for (int64_t kb = 0; kb < kb_count; ++kb) {
      const float scale = w.scales[n * kb_count + kb];
      const __m512 vs = _mm512_set1_ps(scale), vsh = _mm512_set1_ps(-nbits_zero(w, n, kb) * scale);
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

#define GB_NB_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vnni,fma")))

namespace {

// Row n's zero-point term for activation row m: sum over blocks of scale_b * zero * (scale_a * sum q).
GB_NB_VNNI float int8_zero_term(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n, int64_t m) {
  const int64_t kb_count = w.k_blocks();
  const float* sb = w.scales + n * kb_count;
  const float* sum = a.sum.data() + m * kb_count;
  if (w.zero_packed || w.zero_float) {
    float t = 0;
    for (int64_t kb = 0; kb < kb_count; ++kb) t += sb[kb] * nbits_zero(w, n, kb) * sum[kb];
    return t;
  }
  __m512 acc = _mm512_setzero_ps();
  for (int64_t kb = 0; kb < kb_count; kb += 16) {
    const __mmask16 k = kb + 16 <= kb_count ? __mmask16(0xFFFF) : __mmask16((1u << (kb_count - kb)) - 1);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, sb + kb), _mm512_maskz_loadu_ps(k, sum + kb), acc);
  }
  return static_cast<float>(int64_t{1} << (w.bits - 1)) * _mm512_reduce_add_ps(acc);
}

// One weight row n against activation rows m0..m0+R: 64 code bytes per step, one or two VNNI dot products
// (u8 codes x s8 activations, 4 products per 32-bit lane), lanes scaled by their block's scale_b * scale_a.
template <int Bits, int R>
GB_NB_VNNI void row_int8_vnni(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n, int64_t m0, float* Y,
                              int64_t ldy) {
  const int64_t kb_count = w.k_blocks(), row_bytes = kb_count * w.blob();
  const int shift = __builtin_ctzll(static_cast<uint64_t>(w.block_size));  // block_size: a power of two (checked at load)
  const uint8_t* codes = w.codes + n * row_bytes;
  const float* sb = w.scales + n * kb_count;
  constexpr int64_t kValues = Bits == 4 ? 128 : 64;  // values per 64 code bytes
  constexpr int kLaneValues = Bits == 4 ? 8 : 4;      // values per 32-bit lane (lo and hi nibbles: 4 bytes, 8 values)
  const int64_t per_chunk = std::max<int64_t>(1, kValues >> shift);
  // Lane l's block, relative to the step's first block (0 for blocks wider than a step).
  const __m512i idx = _mm512_srli_epi32(_mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                                             14, 15),
                                                         _mm512_set1_epi32(kLaneValues)),
                                        static_cast<unsigned>(std::min(shift, 31)));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t c = 0; c * 64 < row_bytes; ++c) {
    const int64_t left = row_bytes - c * 64;
    // A masked load only for the row's last bytes (it stalled every step when used throughout).
    const __m512i v = left >= 64 ? _mm512_loadu_si512(codes + c * 64)
                                 : _mm512_maskz_loadu_epi8((__mmask64(1) << left) - 1, codes + c * 64);
    const int64_t first = (c * kValues) >> shift, blocks = std::min(per_chunk, kb_count - first);
    const __mmask16 bm = __mmask16((1u << blocks) - 1);
    const __m512 sbv = _mm512_maskz_loadu_ps(bm, sb + first);
    for (int r = 0; r < R; ++r) {
      const int8_t* q = a.q.data() + (m0 + r) * a.row_values + c * kValues;
      __m512i d;
      if constexpr (Bits == 4) {
        d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(v, nibble), _mm512_loadu_si512(q));
        d = _mm512_dpbusd_epi32(d, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble), _mm512_loadu_si512(q + 64));
      } else {
        d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v, _mm512_loadu_si512(q));
      }
      const __m512 sav = _mm512_maskz_loadu_ps(bm, a.scale.data() + (m0 + r) * kb_count + first);
      const __m512 lane_scale = _mm512_permutexvar_ps(idx, _mm512_mul_ps(sbv, sav));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), lane_scale, acc[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    Y[(m0 + r) * ldy + n] = _mm512_reduce_add_ps(acc[r]) - int8_zero_term(a, w, n, m0 + r);
}

template <int Bits>
void rows_int8_vnni(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                    int64_t ldy) {
  for (int64_t m0 = 0; m0 < a.M; m0 += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, a.M - m0);
    for (int64_t n = n0; n < n1; ++n) {
      switch (rows) {
        case 1: row_int8_vnni<Bits, 1>(a, w, n, m0, Y, ldy); break;
        case 2: row_int8_vnni<Bits, 2>(a, w, n, m0, Y, ldy); break;
        case 3: row_int8_vnni<Bits, 3>(a, w, n, m0, Y, ldy); break;
        default: row_int8_vnni<Bits, 4>(a, w, n, m0, Y, ldy); break;
      }
    }
  }
}

}  // namespace

void matmul_nbits_int8_vnni(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                            int64_t ldy) {
  if (w.bits == 4) return rows_int8_vnni<4>(a, w, n0, n1, Y, ldy);
  rows_int8_vnni<8>(a, w, n0, n1, Y, ldy);
}

}  // namespace glassbox::kernels::x86
