// Linear (de)quantization and integer convolution, reference loops.
//   quantize:   q = saturate(round_half_even(x / scale) + zero_point)
//   dequantize: x = (q - zero_point) * scale
// Per-axis forms view the data as [outer, axis_dim, inner] with one scale and
// zero point per axis index. minmax_f32 / quantize_f32_u8 are the vectorized
// per-tensor forms (AVX2 when the CPU has it, quantize_fast.cpp), equal to the loops here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/conv.h"

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// round(v) + zero_point saturated to Q; NaN maps to Q's lowest value, as in ONNX Runtime (its
// clamp max(q, lowest) returns lowest for a NaN q): 0 for uint8, -128 for int8.
template <class Q>
inline Q saturate_round(float v, int32_t zero_point) {
  const float q = std::nearbyint(v) + static_cast<float>(zero_point);  // default FE_TONEAREST: ties to even
  if (std::isnan(q)) return std::numeric_limits<Q>::lowest();
  return static_cast<Q>(std::clamp<float>(q, static_cast<float>(std::numeric_limits<Q>::lowest()),
                                          static_cast<float>(std::numeric_limits<Q>::max())));
}

// lo = min(0, min x), hi = max(0, max x); NaN elements are ignored.
void minmax_f32(const float* x, int64_t n, float* lo, float* hi);

// minmax_f32 in ONNX Runtime's order (MLAS's AVX min/max kernel: four then one 8-lane accumulator of
// max_ps/min_ps, folded, the tail by std::max/std::min), for an input holding NaN: there a NaN wipes the
// values its lane had collected, so ORT's range, and so its scale, can leave out finite elements.
// Equal to minmax_f32 on NaN-free input. any_nan_f32: whether x holds a NaN.
void minmax_f32_onnxruntime_order(const float* x, int64_t n, float* lo, float* hi);
bool any_nan_f32(const float* x, int64_t n);

// DynamicQuantizeLinear's parameters from the range [lo, hi] of minmax_f32:
// scale = (hi - lo) / 255 (1 when not > 0: an all-zero input, or a range whose scale underflows),
// zero point = saturate_round<uint8_t>(-lo / scale).
inline void dynamic_u8_params(float lo, float hi, float* scale, int32_t* zero_point) {
  float s = (hi - lo) / 255.f;
  if (!(s > 0.f)) s = 1.f;
  *scale = s;
  *zero_point = saturate_round<uint8_t>(-lo / s, 0);
}

// y[i] = saturate_round<uint8_t>(x[i] / scale, zero_point), per tensor.
void quantize_f32_u8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y);

// minmax_f32 / quantize_f32_u8 over n elements on `pool` (nullptr: the calling thread): one chunk
// per pool thread, at least 16384 elements and a multiple of 64 (2 threads on a 128 x 768
// activation split it 50/50). The results equal the serial calls (min/max are exact, elements
// are independent). DynamicQuantizeLinear and LayerNormDynamicQuantize cut their tensors so.
void minmax_f32_parallel(const float* x, int64_t n, float* lo, float* hi, ThreadPool* pool);
void quantize_f32_u8_parallel(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y, ThreadPool* pool);

// scale/zero_point have axis_dim entries (1 with axis_dim = 1 for per-tensor).
template <class X, class Q>
void quantize_linear(const X* x, const float* scale, const int32_t* zero_point, Q* y, int64_t outer, int64_t axis_dim,
                     int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < axis_dim; ++a) {
      const float s = scale[a];
      const int32_t z = zero_point[a];
      const int64_t base = (o * axis_dim + a) * inner;
      for (int64_t i = 0; i < inner; ++i) y[base + i] = saturate_round<Q>(static_cast<float>(x[base + i]) / s, z);
    }
}

template <class Q>
void dequantize_linear(const Q* x, const float* scale, const int32_t* zero_point, float* y, int64_t outer,
                       int64_t axis_dim, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < axis_dim; ++a) {
      const float s = scale[a];
      const int32_t z = zero_point[a];
      const int64_t base = (o * axis_dim + a) * inner;
      for (int64_t i = 0; i < inner; ++i)
        y[base + i] = static_cast<float>(static_cast<int32_t>(x[base + i]) - z) * s;
    }
}

// y[n, m, out...] = sum over (c, k...) of (x - x_zp) * (w[m] - w_zp[m]) in int32;
// padding contributes 0 (the pad value is the zero point). w_zp has c_out entries.
template <class TX, class TW>
void conv_integer_reference(const ConvGeometry& g, const TX* x, int32_t x_zp, const TW* w, const int32_t* w_zp,
                            int32_t* y) {
  const int64_t cpg = g.c_in / g.group, mpg = g.c_out / g.group;
  int64_t in[3], out[3], k[3], s[3], d[3], p[3];
  for (int i = 0; i < 3; ++i) {
    const bool used = i < g.spatial;
    in[i] = used ? g.in[i] : 1;
    out[i] = used ? g.out[i] : 1;
    k[i] = used ? g.kernel[i] : 1;
    s[i] = used ? g.stride[i] : 1;
    d[i] = used ? g.dilation[i] : 1;
    p[i] = used ? g.pad_begin[i] : 0;
  }
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], k_size = k[0] * k[1] * k[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.c_out; ++m) {
      const int64_t grp = m / mpg;
      const TW* wm = w + m * cpg * k_size;
      int32_t* ym = y + (n * g.c_out + m) * out_plane;
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            int32_t acc = 0;
            for (int64_t c = 0; c < cpg; ++c) {
              const TX* xc = x + (n * g.c_in + grp * cpg + c) * in_plane;
              const TW* wc = wm + c * k_size;
              for (int64_t k0 = 0; k0 < k[0]; ++k0) {
                const int64_t i0 = o0 * s[0] - p[0] + k0 * d[0];
                if (i0 < 0 || i0 >= in[0]) continue;
                for (int64_t k1 = 0; k1 < k[1]; ++k1) {
                  const int64_t i1 = o1 * s[1] - p[1] + k1 * d[1];
                  if (i1 < 0 || i1 >= in[1]) continue;
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i2 = o2 * s[2] - p[2] + k2 * d[2];
                    if (i2 < 0 || i2 >= in[2]) continue;
                    acc += (static_cast<int32_t>(xc[(i0 * in[1] + i1) * in[2] + i2]) - x_zp) *
                           (static_cast<int32_t>(wc[(k0 * k[1] + k1) * k[2] + k2]) - w_zp[m]);
                  }
                }
              }
            }
            ym[(o0 * out[1] + o1) * out[2] + o2] = acc;
          }
    }
}

}  // namespace glassbox::kernels
