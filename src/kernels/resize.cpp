#include "kernels/resize.h"

#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

double original_coord(const ResizeAxisParams& p, int64_t x, int64_t in_dim, int64_t out_dim) {
  const double s = p.scale;
  switch (p.coord) {
    case CoordMode::kHalfPixel: return (x + 0.5) / s - 0.5;
    case CoordMode::kPytorchHalfPixel: return out_dim > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case CoordMode::kAlignCorners: {
      // The spec's length_resized is in_dim * scale, unrounded when scales were given.
      const double len = static_cast<double>(in_dim) * s;
      return out_dim == 1 || len <= 1.0 ? 0.0 : static_cast<double>(x) * (in_dim - 1) / (len - 1.0);
    }
    case CoordMode::kAsymmetric: return x / s;
    case CoordMode::kTfHalfPixelForNn: return (x + 0.5) / s;
    case CoordMode::kTfCropAndResize:
      return out_dim > 1 ? p.roi_start * (in_dim - 1) +
                               static_cast<double>(x) * (p.roi_end - p.roi_start) * (in_dim - 1) / (out_dim - 1)
                         : 0.5 * (p.roi_start + p.roi_end) * (in_dim - 1);
  }
  return 0.0;
}

int64_t nearest_index(const ResizeAxisParams& p, double xo) {
  switch (p.nearest) {
    case NearestMode::kRoundPreferFloor:
      return xo == std::floor(xo) + 0.5 ? static_cast<int64_t>(std::floor(xo)) : static_cast<int64_t>(std::round(xo));
    case NearestMode::kRoundPreferCeil:
      return xo == std::floor(xo) + 0.5 ? static_cast<int64_t>(std::ceil(xo)) : static_cast<int64_t>(std::round(xo));
    case NearestMode::kFloor: return static_cast<int64_t>(std::floor(xo));
    case NearestMode::kCeil: return static_cast<int64_t>(std::ceil(xo));
    case NearestMode::kSimple:
      return p.scale < 1.f ? static_cast<int64_t>(std::ceil(xo)) : static_cast<int64_t>(xo);
  }
  return 0;
}

}  // namespace

ResizeTaps resize_taps(const ResizeAxisParams& p, int64_t in_dim, int64_t out_dim) {
  ResizeTaps t;
  t.taps = p.mode == ResizeMode::kNearest ? 1 : p.mode == ResizeMode::kLinear ? 2 : 4;
  t.index.assign(static_cast<size_t>(out_dim * t.taps), 0);
  t.weight.assign(t.index.size(), 0.f);
  auto clampi = [in_dim](int64_t i) { return std::clamp<int64_t>(i, 0, in_dim - 1); };
  for (int64_t o = 0; o < out_dim; ++o) {
    int64_t* idx = &t.index[static_cast<size_t>(o * t.taps)];
    float* w = &t.weight[static_cast<size_t>(o * t.taps)];
    const double xo = original_coord(p, o, in_dim, out_dim);
    if (p.coord == CoordMode::kTfCropAndResize && (xo < 0 || xo > in_dim - 1)) {
      for (int k = 0; k < t.taps; ++k) idx[k] = -1;
      w[0] = 1.f;
      continue;
    }
    if (p.mode == ResizeMode::kNearest) {
      idx[0] = clampi(nearest_index(p, xo));
      w[0] = 1.f;
    } else if (p.mode == ResizeMode::kLinear) {
      const double xc = std::clamp<double>(xo, 0.0, static_cast<double>(in_dim - 1));
      const int64_t i0 = static_cast<int64_t>(std::floor(xc));
      const double r = xc - i0;
      idx[0] = clampi(i0);
      idx[1] = clampi(i0 + 1);
      w[0] = static_cast<float>(1.0 - r);
      w[1] = static_cast<float>(r);
      // At the last element both taps are the same one: half weight each, as ONNX Runtime takes it,
      // so an Inf there stays Inf (1 * Inf + 0 * Inf would be NaN); finite values are unchanged.
      if (idx[0] == idx[1]) w[0] = w[1] = 0.5f;
    } else {
      const int64_t i0 = static_cast<int64_t>(std::floor(xo));
      const double r = xo - i0, A = p.cubic_a;
      const double d[4] = {1 + r, r, 1 - r, 2 - r};
      double c[4];
      for (int k = 0; k < 4; ++k) {
        const double a = d[k];
        c[k] = a <= 1 ? ((A + 2) * a - (A + 3)) * a * a + 1 : ((A * a - 5 * A) * a + 8 * A) * a - 4 * A;
      }
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t src = i0 - 1 + k;
        if (p.exclude_outside && (src < 0 || src >= in_dim)) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < 4; ++k) {
        idx[k] = clampi(i0 - 1 + k);
        w[k] = static_cast<float>(p.exclude_outside && sum != 0 ? c[k] / sum : c[k]);
      }
    }
  }
  return t;
}

void resize_axis_f32(int64_t outer, int64_t in_dim, int64_t out_dim, int64_t inner, const ResizeTaps& t,
                     float extrapolation_value, const float* x, float* y, ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / out_dim, j = k % out_dim;
      const int64_t* idx = &t.index[static_cast<size_t>(j * t.taps)];
      const float* w = &t.weight[static_cast<size_t>(j * t.taps)];
      float* yp = y + k * inner;
      if (idx[0] < 0) {
        std::fill(yp, yp + inner, extrapolation_value);
        continue;
      }
      const float* xb = x + o * in_dim * inner;
      if (t.taps == 1) {
        std::copy(xb + idx[0] * inner, xb + idx[0] * inner + inner, yp);
        continue;
      }
      for (int64_t i = 0; i < inner; ++i) {
        float acc = 0.f;
        for (int q = 0; q < t.taps; ++q) acc += w[q] * xb[idx[q] * inner + i];
        yp[i] = acc;
      }
    }
  };
  const int64_t n = outer * out_dim;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner));
  if (pool && n > grain) pool->parallel_for(n, grain, body);
  else body(0, n);
}

}  // namespace glassbox::kernels
