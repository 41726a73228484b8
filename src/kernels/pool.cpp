#include "kernels/pool.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

template <class Fn>
void for_each_plane(int64_t planes, int64_t work_per_plane, ThreadPool* pool, const Fn& fn) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) fn(p);
  };
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work_per_plane));
  if (pool && planes > grain) pool->parallel_for(planes, grain, body);
  else body(0, planes);
}

struct G3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};

G3 pad3(const PoolGeometry& g) {
  G3 r{};
  for (int i = 0; i < 3; ++i) {
    const bool u = i < g.spatial;
    r.in[i] = u ? g.in[i] : 1;
    r.out[i] = u ? g.out[i] : 1;
    r.k[i] = u ? g.kernel[i] : 1;
    r.s[i] = u ? g.stride[i] : 1;
    r.d[i] = u ? g.dilation[i] : 1;
    r.pb[i] = u ? g.pad_begin[i] : 0;
    r.pe[i] = u ? g.pad_end[i] : 0;
  }
  return r;
}

}  // namespace

// Which element of a window wins when NaN is involved (docs/kernels.md, "NaN and Inf"). Float
// without indices or dilation takes ONNX Runtime's MLAS order instead (mlas_max_pool below);
// the rules here are ONNX Runtime's other two max-pool kernels:
//  kFirstNaN (no indices, dilated): best = first element, then v > best ? v : best, so a NaN
//            wins only as the window's first element;
//  kSkipNaN  (with indices, and the 8-bit types): v > best from the lowest value, so a NaN never wins.
enum class NanRule { kFirstNaN, kSkipNaN };

// Whether v replaces best; `none`: nothing taken yet in this window.
template <class T>
bool takes(NanRule rule, bool none, T v, T best) {
  if (rule == NanRule::kFirstNaN) return none || v > best;
  return (none && v == v) || v > best;  // v == v: not NaN (always true for integers)
}

template <class T>
void max_pool_t(const PoolGeometry& g, const T* x, T* y, int64_t* indices, int storage_order, ThreadPool* pool) {
  const G3 d = pad3(g);
  const bool dilated = d.d[0] > 1 || d.d[1] > 1 || d.d[2] > 1;
  const NanRule rule = !indices && dilated ? NanRule::kFirstNaN : NanRule::kSkipNaN;
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  for_each_plane(g.planes, out_sp * d.k[0] * d.k[1] * d.k[2], pool, [&](int64_t p) {
    const T* xp = x + p * in_sp;
    T* yp = y + p * out_sp;
    int64_t* ip = indices ? indices + p * out_sp : nullptr;
    for (int64_t o0 = 0; o0 < d.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < d.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
          T best = std::numeric_limits<T>::lowest();  // replaced by the first value inside the window
          int64_t best_at = -1, bi0 = 0, bi1 = 0, bi2 = 0, first_at = -1;
          for (int64_t k0 = 0; k0 < d.k[0]; ++k0) {
            const int64_t i0 = o0 * d.s[0] - d.pb[0] + k0 * d.d[0];
            if (i0 < 0 || i0 >= d.in[0]) continue;
            for (int64_t k1 = 0; k1 < d.k[1]; ++k1) {
              const int64_t i1 = o1 * d.s[1] - d.pb[1] + k1 * d.d[1];
              if (i1 < 0 || i1 >= d.in[1]) continue;
              for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
                const int64_t i2 = o2 * d.s[2] - d.pb[2] + k2 * d.d[2];
                if (i2 < 0 || i2 >= d.in[2]) continue;
                const int64_t at = (i0 * d.in[1] + i1) * d.in[2] + i2;
                if (first_at < 0) first_at = at;
                if (takes(rule, best_at < 0, xp[at], best)) {
                  best = xp[at];
                  best_at = at;
                  bi0 = i0;
                  bi1 = i1;
                  bi2 = i2;
                }
              }
            }
          }
          if (best_at < 0 && first_at >= 0) {  // an all-NaN window: NaN, at its first element
            best = xp[first_at];
            best_at = first_at;
            bi0 = first_at / (d.in[1] * d.in[2]);
            bi1 = first_at / d.in[2] % d.in[1];
            bi2 = first_at % d.in[2];
          }
          const int64_t o = (o0 * d.out[1] + o1) * d.out[2] + o2;
          yp[o] = best;
          if (ip) {
            int64_t local = best_at;
            if (storage_order == 1) local = (bi2 * d.in[1] + bi1) * d.in[0] + bi0;
            ip[o] = p * in_sp + local;
          }
        }
  });
}

// Float MaxPool without indices or dilation in ONNX Runtime's MLAS order (its pooling.cpp: a global,
// a vectorized and a generic kernel, chosen by shape). Every kernel computes the true maximum of
// finite values; they differ in what a NaN does, and this reproduces each one (nonfinite_peer):
//  lane_max  = one lane of SSE maxps: the second operand unless acc > v, so a NaN on either side
//              gives v — a NaN is kept only until the next element;
//  std_max   = std::max(acc, v): a NaN value is skipped, a NaN accumulator stays.
namespace {

constexpr float kLowest = std::numeric_limits<float>::lowest();
inline float lane_max(float acc, float v) { return acc > v ? acc : v; }
inline float std_max(float acc, float v) { return acc < v ? v : acc; }

enum class MlasKernel { kGlobal, kVector, kGeneric };

MlasKernel mlas_kernel(const PoolGeometry& g) {
  bool whole = true, small = true;
  for (int i = 0; i < g.spatial; ++i) {
    whole &= g.kernel[i] == g.in[i] && g.stride[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
    small &= g.kernel[i] <= 32;
  }
  if (whole) return MlasKernel::kGlobal;
  const int w = g.spatial - 1;  // the vector kernels' reduction row: 2048 floats less 3 of over-read
  if (g.spatial >= 2 && g.stride[w] <= 2 && small && g.pad_begin[w] + g.pad_end[w] + g.in[w] <= 2045)
    return MlasKernel::kVector;
  return MlasKernel::kGeneric;
}

// Four lanes over the plane, folded lanes (0,2) and (1,3) then the two, and the tail by std::max.
float mlas_global(const float* x, int64_t n) {
  float lane[4] = {kLowest, kLowest, kLowest, kLowest};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) lane[l] = lane_max(lane[l], x[i + l]);
  float r = lane_max(lane_max(lane[0], lane[2]), lane_max(lane[1], lane[3]));
  for (; i < n; ++i) r = std_max(r, x[i]);
  return r;
}

// A window's range on one axis as the vector kernels clamp it: a start outside the input becomes 0.
void mlas_rows(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t n, int64_t* b, int64_t* e) {
  *b = o * stride - pad;
  *e = *b + k;
  if (*b < 0 || *b >= n) *b = 0;
  if (*e > n || *e < 0) *e = n;
}

// The vector kernel for one output row: columns reduced down the window's rows (planes and rows for
// 3D) into a padded row — whole groups of four by lane_max, the tail by std_max; a 2D column starts
// from its first row, a 3D one from the lowest value — then each output by lane_max across the
// kernel width, padding being the lowest value.
void mlas_vector_row(const PoolGeometry& g, const float* plane, int64_t d0, int64_t d1, int64_t h0, int64_t h1,
                     std::vector<float>& row, float* y) {
  const bool two_d = g.spatial == 2;
  const int64_t H = two_d ? g.in[0] : g.in[1], W = g.in[g.spatial - 1], whole4 = W / 4 * 4;
  const int64_t pl = g.pad_begin[g.spatial - 1], kw = g.kernel[g.spatial - 1], sw = g.stride[g.spatial - 1];
  std::fill(row.begin(), row.end(), kLowest);
  for (int64_t c = 0; c < W; ++c) {
    const bool lanes = c < whole4;
    float acc = kLowest;
    bool first = two_d;  // 2D: the first row is loaded, not reduced
    for (int64_t d = d0; d < d1; ++d)
      for (int64_t h = h0; h < h1; ++h) {
        const float v = plane[(d * H + h) * W + c];
        acc = first ? v : lanes ? lane_max(acc, v) : std_max(acc, v);
        first = false;
      }
    row[static_cast<size_t>(pl + c)] = acc;
  }
  const int64_t ow = g.out[g.spatial - 1];
  for (int64_t o = 0; o < ow; ++o) {
    const float* r = row.data() + o * sw;
    float acc = r[0];
    for (int64_t k = 1; k < kw; ++k) acc = lane_max(acc, r[k]);
    y[o] = acc;
  }
}

void mlas_vector(const PoolGeometry& g, const float* plane, float* y) {
  const int w = g.spatial - 1;
  const size_t len = static_cast<size_t>(std::max(g.pad_begin[w] + g.in[w] + g.pad_end[w] + 3,
                                                  (g.out[w] - 1) * g.stride[w] + g.kernel[w]));
  std::vector<float> row(len);
  const bool two_d = g.spatial == 2;
  const int64_t od = two_d ? 1 : g.out[0], oh = g.out[w - 1];
  for (int64_t pd = 0; pd < od; ++pd) {
    int64_t d0 = 0, d1 = 1;
    if (!two_d) mlas_rows(pd, g.stride[0], g.pad_begin[0], g.kernel[0], g.in[0], &d0, &d1);
    for (int64_t ph = 0; ph < oh; ++ph, y += g.out[w]) {
      int64_t h0 = 0, h1 = 0;
      mlas_rows(ph, g.stride[w - 1], g.pad_begin[w - 1], g.kernel[w - 1], g.in[w - 1], &h0, &h1);
      mlas_vector_row(g, plane, d0, d1, h0, h1, row, y);
    }
  }
}

// The generic kernel: std_max from the lowest value over the clamped window (a NaN never wins; an
// all-NaN window gives the lowest float, as ONNX Runtime does).
void mlas_generic(const PoolGeometry& g, const float* plane, float* y) {
  const G3 d = pad3(g);
  for (int64_t o0 = 0; o0 < d.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < d.out[1]; ++o1)
      for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
        const int64_t o[3] = {o0, o1, o2};
        int64_t b[3], e[3];
        for (int i = 0; i < 3; ++i) {
          b[i] = std::max<int64_t>(o[i] * d.s[i] - d.pb[i], 0);
          e[i] = std::min<int64_t>(o[i] * d.s[i] - d.pb[i] + d.k[i], d.in[i]);
        }
        float m = kLowest;
        for (int64_t i0 = b[0]; i0 < e[0]; ++i0)
          for (int64_t i1 = b[1]; i1 < e[1]; ++i1)
            for (int64_t i2 = b[2]; i2 < e[2]; ++i2) m = std_max(m, plane[(i0 * d.in[1] + i1) * d.in[2] + i2]);
        *y++ = m;
      }
}

void mlas_max_pool(const PoolGeometry& g, const float* x, float* y, ThreadPool* pool) {
  const G3 d = pad3(g);
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  const MlasKernel kernel = mlas_kernel(g);
  for_each_plane(g.planes, out_sp * d.k[0] * d.k[1] * d.k[2], pool, [&](int64_t p) {
    const float* xp = x + p * in_sp;
    float* yp = y + p * out_sp;
    switch (kernel) {
      case MlasKernel::kGlobal: *yp = mlas_global(xp, in_sp); break;
      case MlasKernel::kVector: mlas_vector(g, xp, yp); break;
      case MlasKernel::kGeneric: mlas_generic(g, xp, yp); break;
    }
  });
}

}  // namespace

void max_pool_f32(const PoolGeometry& g, const float* x, float* y, int64_t* indices, int storage_order,
                  ThreadPool* pool) {
  bool dilated = false;
  for (int i = 0; i < g.spatial; ++i) dilated |= g.dilation[i] > 1;
  if (!indices && !dilated) return mlas_max_pool(g, x, y, pool);
  max_pool_t(g, x, y, indices, storage_order, pool);
}
void max_pool_u8(const PoolGeometry& g, const uint8_t* x, uint8_t* y, int64_t* indices, int storage_order,
                 ThreadPool* pool) {
  max_pool_t(g, x, y, indices, storage_order, pool);
}
void max_pool_i8(const PoolGeometry& g, const int8_t* x, int8_t* y, int64_t* indices, int storage_order,
                 ThreadPool* pool) {
  max_pool_t(g, x, y, indices, storage_order, pool);
}

void avg_pool_f32(const PoolGeometry& g, const float* x, float* y, bool count_include_pad, ThreadPool* pool) {
  const G3 d = pad3(g);
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  for_each_plane(g.planes, out_sp * d.k[0] * d.k[1] * d.k[2], pool, [&](int64_t p) {
    const float* xp = x + p * in_sp;
    float* yp = y + p * out_sp;
    for (int64_t o0 = 0; o0 < d.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < d.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
          float sum = 0.f;
          int64_t inside = 0, padded = 1;
          const int64_t o[3] = {o0, o1, o2};
          // Positions counted with padding: those inside [-pad_begin, in + pad_end).
          for (int a = 0; a < 3; ++a) {
            int64_t c = 0;
            for (int64_t k = 0; k < d.k[a]; ++k) {
              const int64_t i = o[a] * d.s[a] - d.pb[a] + k * d.d[a];
              if (i < d.in[a] + d.pe[a]) ++c;
            }
            padded *= c;
          }
          for (int64_t k0 = 0; k0 < d.k[0]; ++k0) {
            const int64_t i0 = o0 * d.s[0] - d.pb[0] + k0 * d.d[0];
            if (i0 < 0 || i0 >= d.in[0]) continue;
            for (int64_t k1 = 0; k1 < d.k[1]; ++k1) {
              const int64_t i1 = o1 * d.s[1] - d.pb[1] + k1 * d.d[1];
              if (i1 < 0 || i1 >= d.in[1]) continue;
              for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
                const int64_t i2 = o2 * d.s[2] - d.pb[2] + k2 * d.d[2];
                if (i2 < 0 || i2 >= d.in[2]) continue;
                sum += xp[(i0 * d.in[1] + i1) * d.in[2] + i2];
                ++inside;
              }
            }
          }
          const int64_t div = count_include_pad ? padded : inside;
          yp[(o0 * d.out[1] + o1) * d.out[2] + o2] = div > 0 ? sum / static_cast<float>(div) : 0.f;
        }
  });
}

void global_pool_f32(int64_t planes, int64_t size, const float* x, float* y, bool is_max, ThreadPool* pool) {
  for_each_plane(planes, size, pool, [&](int64_t p) {
    const float* xp = x + p * size;
    if (is_max) {
      y[p] = mlas_global(xp, size);  // ONNX Runtime's order (above): a plane of -Inf gives the lowest float
    } else {
      double s = 0.0;
      for (int64_t i = 0; i < size; ++i) s += xp[i];
      y[p] = size ? static_cast<float>(s / static_cast<double>(size)) : 0.f;
    }
  });
}

}  // namespace glassbox::kernels
