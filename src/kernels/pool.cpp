#include "kernels/pool.h"

#include <algorithm>
#include <limits>

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

// Which element of a window wins when NaN is involved: ONNX Runtime's three max-pool kernels
// differ, and each is followed (docs/kernels.md, "NaN and Inf"):
//  kLastNaN  (no indices, no dilation; MLAS): NaN when the window's last element is NaN, else
//            the maximum of its other elements (NaN skipped);
//  kFirstNaN (no indices, dilated): best = first element, then v > best ? v : best, so a NaN
//            wins only as the window's first element;
//  kSkipNaN  (with indices): v > best from the lowest value, so a NaN never wins.
enum class NanRule { kLastNaN, kFirstNaN, kSkipNaN };

// Whether v replaces best; `none`: nothing taken yet in this window.
template <class T>
bool takes(NanRule rule, bool none, T v, T best) {
  switch (rule) {
    case NanRule::kFirstNaN: return none || v > best;
    case NanRule::kLastNaN: case NanRule::kSkipNaN: break;  // kLastNaN: the last element is checked after the window
  }
  return (none && v == v) || v > best;  // v == v: not NaN (always true for integers)
}

template <class T>
void max_pool_t(const PoolGeometry& g, const T* x, T* y, int64_t* indices, int storage_order, ThreadPool* pool) {
  const G3 d = pad3(g);
  const bool dilated = d.d[0] > 1 || d.d[1] > 1 || d.d[2] > 1;
  const NanRule rule = indices ? NanRule::kSkipNaN : dilated ? NanRule::kFirstNaN : NanRule::kLastNaN;
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  for_each_plane(g.planes, out_sp * d.k[0] * d.k[1] * d.k[2], pool, [&](int64_t p) {
    const T* xp = x + p * in_sp;
    T* yp = y + p * out_sp;
    int64_t* ip = indices ? indices + p * out_sp : nullptr;
    for (int64_t o0 = 0; o0 < d.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < d.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
          T best = std::numeric_limits<T>::lowest();  // replaced by the first value inside the window
          int64_t best_at = -1, bi0 = 0, bi1 = 0, bi2 = 0, first_at = -1, last_at = -1;
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
                last_at = at;
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
          if (rule == NanRule::kLastNaN && last_at >= 0 && xp[last_at] != xp[last_at]) best = xp[last_at];
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

void max_pool_f32(const PoolGeometry& g, const float* x, float* y, int64_t* indices, int storage_order,
                  ThreadPool* pool) {
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
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < size; ++i) m = std::max(m, xp[i]);
      y[p] = m;
    } else {
      double s = 0.0;
      for (int64_t i = 0; i < size; ++i) s += xp[i];
      y[p] = size ? static_cast<float>(s / static_cast<double>(size)) : 0.f;
    }
  });
}

}  // namespace glassbox::kernels
