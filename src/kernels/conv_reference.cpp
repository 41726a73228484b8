#include "kernels/conv.h"

#include <algorithm>
#include <cmath>

namespace glassbox::kernels {
namespace {

// Spatial dims padded to 3 so one loop nest covers 1-D, 2-D and 3-D.
struct Dims3 {
  int64_t in[3], out[3], k[3], s[3], d[3], p[3];
};

Dims3 dims3(const ConvGeometry& g) {
  Dims3 r{};
  for (int i = 0; i < 3; ++i) {
    const bool used = i < g.spatial;
    r.in[i] = used ? g.in[i] : 1;
    r.out[i] = used ? g.out[i] : 1;
    r.k[i] = used ? g.kernel[i] : 1;
    r.s[i] = used ? g.stride[i] : 1;
    r.d[i] = used ? g.dilation[i] : 1;
    r.p[i] = used ? g.pad_begin[i] : 0;
  }
  return r;
}

}  // namespace

void conv_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y) {
  const Dims3 d = dims3(g);
  const int64_t icg = g.c_in / g.group, ocg = g.c_out / g.group;
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  const int64_t k_sp = d.k[0] * d.k[1] * d.k[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oc = 0; oc < g.c_out; ++oc) {
      const int64_t grp = oc / ocg;
      float* yp = y + (n * g.c_out + oc) * out_sp;
      for (int64_t o0 = 0; o0 < d.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < d.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < d.out[2]; ++o2) {
            double acc = b ? b[oc] : 0.0;
            for (int64_t ic = 0; ic < icg; ++ic) {
              const float* xp = x + (n * g.c_in + grp * icg + ic) * in_sp;
              const float* wp = w + (oc * icg + ic) * k_sp;
              for (int64_t k0 = 0; k0 < d.k[0]; ++k0) {
                const int64_t i0 = o0 * d.s[0] - d.p[0] + k0 * d.d[0];
                if (i0 < 0 || i0 >= d.in[0]) continue;
                for (int64_t k1 = 0; k1 < d.k[1]; ++k1) {
                  const int64_t i1 = o1 * d.s[1] - d.p[1] + k1 * d.d[1];
                  if (i1 < 0 || i1 >= d.in[1]) continue;
                  for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
                    const int64_t i2 = o2 * d.s[2] - d.p[2] + k2 * d.d[2];
                    if (i2 < 0 || i2 >= d.in[2]) continue;
                    acc += static_cast<double>(xp[(i0 * d.in[1] + i1) * d.in[2] + i2]) *
                           wp[(k0 * d.k[1] + k1) * d.k[2] + k2];
                  }
                }
              }
            }
            yp[(o0 * d.out[1] + o1) * d.out[2] + o2] = static_cast<float>(acc);
          }
    }
}

void conv_transpose_f32_reference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y) {
  const Dims3 d = dims3(g);
  const int64_t icg = g.c_in / g.group, ocg = g.c_out / g.group;
  const int64_t in_sp = d.in[0] * d.in[1] * d.in[2], out_sp = d.out[0] * d.out[1] * d.out[2];
  const int64_t k_sp = d.k[0] * d.k[1] * d.k[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oc = 0; oc < g.c_out; ++oc)
      for (int64_t i = 0; i < out_sp; ++i) y[(n * g.c_out + oc) * out_sp + i] = b ? b[oc] : 0.f;
  // Scatter: each input pixel adds w * x to the outputs its kernel covers.
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t ic = 0; ic < g.c_in; ++ic) {
      const int64_t grp = ic / icg;
      const float* xp = x + (n * g.c_in + ic) * in_sp;
      for (int64_t ocl = 0; ocl < ocg; ++ocl) {
        const int64_t oc = grp * ocg + ocl;
        float* yp = y + (n * g.c_out + oc) * out_sp;
        const float* wp = w + (ic * ocg + ocl) * k_sp;
        for (int64_t i0 = 0; i0 < d.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < d.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < d.in[2]; ++i2) {
              const float xv = xp[(i0 * d.in[1] + i1) * d.in[2] + i2];
              for (int64_t k0 = 0; k0 < d.k[0]; ++k0) {
                const int64_t o0 = i0 * d.s[0] - d.p[0] + k0 * d.d[0];
                if (o0 < 0 || o0 >= d.out[0]) continue;
                for (int64_t k1 = 0; k1 < d.k[1]; ++k1) {
                  const int64_t o1 = i1 * d.s[1] - d.p[1] + k1 * d.d[1];
                  if (o1 < 0 || o1 >= d.out[1]) continue;
                  for (int64_t k2 = 0; k2 < d.k[2]; ++k2) {
                    const int64_t o2 = i2 * d.s[2] - d.p[2] + k2 * d.d[2];
                    if (o2 < 0 || o2 >= d.out[2]) continue;
                    yp[(o0 * d.out[1] + o1) * d.out[2] + o2] += xv * wp[(k0 * d.k[1] + k1) * d.k[2] + k2];
                  }
                }
              }
            }
      }
    }
}

void conv_activation_reference(const ConvActivation& a, float* y, int64_t n) {
  using K = ConvActivation::Kind;
  // One loop per kind (no branch inside: the compiler vectorizes min/max).
  switch (a.kind) {
    case K::kNone: return;
    case K::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], 0.f);
      return;
    case K::kClip:
      for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], a.alpha), a.beta);
      return;
    case K::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = std::max(0.f, std::min(1.f, a.alpha * y[i] + a.beta));
      return;
    case K::kHardSwish:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * std::min(std::max(y[i] + 3.f, 0.f), 6.f) * (1.f / 6.f);
      return;
    case K::kSigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + std::exp(-y[i]));
      return;
  }
}

}  // namespace glassbox::kernels
