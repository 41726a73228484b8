// GridSample follows PyTorch's grid_sampler_2d (which the ONNX spec adopted):
// unnormalize, then pad the source coordinate (border: clamp; reflection:
// mirror about the edges, then clamp); out-of-range taps read 0. Bicubic pads
// each integer tap instead of the real coordinate (A = -0.75).
// RoiAlign follows onnxruntime's reference: bilinear samples on a regular grid
// per output bin, samples outside [-1, size] contribute 0.
#include "kernels/sampling.h"

#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

float unnormalize(float coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1.f) / 2.f * static_cast<float>(size - 1)
                       : ((coord + 1.f) * static_cast<float>(size) - 1.f) / 2.f;
}

float clip(float v, int64_t size) { return std::min(static_cast<float>(size - 1), std::max(v, 0.f)); }

// Mirrors v into [twice_low / 2, twice_high / 2].
float reflect(float v, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0.f;
  const float lo = static_cast<float>(twice_low) / 2.f, span = static_cast<float>(twice_high - twice_low) / 2.f;
  if (!std::isfinite(v)) return v;  // NaN / inf stay out of range and read 0
  v = std::fabs(v - lo);
  const float extra = std::fmod(v, span);
  const bool even_flips = std::fmod(std::floor(static_cast<double>(v) / span), 2.0) == 0.0;
  return even_flips ? extra + lo : span - extra + lo;
}

float pad_coord(float v, int64_t size, const GridSampleParams& p) {
  if (p.padding == GridSamplePadding::kBorder) return clip(v, size);
  if (p.padding == GridSamplePadding::kReflection) {
    v = p.align_corners ? reflect(v, 0, 2 * (size - 1)) : reflect(v, -1, 2 * size - 1);
    return clip(v, size);
  }
  return v;
}

// The value at integer-valued (yy, xx); 0 outside the plane (also for NaN / inf).
float tap(const float* plane, int64_t h, int64_t w, float yy, float xx) {
  if (!(yy >= 0.f && yy < static_cast<float>(h) && xx >= 0.f && xx < static_cast<float>(w))) return 0.f;
  return plane[static_cast<int64_t>(yy) * w + static_cast<int64_t>(xx)];
}

void cubic_weights(float t, float wt[4]) {
  constexpr float A = -0.75f;
  auto near = [](float d) { return ((A + 2.f) * d - (A + 3.f)) * d * d + 1.f; };        // |d| <= 1
  auto far = [](float d) { return ((A * d - 5.f * A) * d + 8.f * A) * d - 4.f * A; };  // 1 < |d| < 2
  wt[0] = far(t + 1.f);
  wt[1] = near(t);
  wt[2] = near(1.f - t);
  wt[3] = far(2.f - t);
}

float sample(const GridSampleParams& p, const float* plane, int64_t h, int64_t w, float gx, float gy) {
  if (p.mode == GridSampleMode::kBicubic) {
    const float ix = unnormalize(gx, w, p.align_corners), iy = unnormalize(gy, h, p.align_corners);
    const float fx = std::floor(ix), fy = std::floor(iy);
    float wx[4], wy[4];
    cubic_weights(ix - fx, wx);
    cubic_weights(iy - fy, wy);
    float acc = 0.f;
    for (int i = 0; i < 4; ++i) {
      float row = 0.f;
      for (int j = 0; j < 4; ++j) {
        // Each tap is padded on its own (border/reflection), then bounds-checked.
        const float tx = pad_coord(fx - 1.f + static_cast<float>(j), w, p);
        const float ty = pad_coord(fy - 1.f + static_cast<float>(i), h, p);
        row += wx[j] * tap(plane, h, w, std::floor(ty), std::floor(tx));
      }
      acc += wy[i] * row;
    }
    return acc;
  }
  const float ix = pad_coord(unnormalize(gx, w, p.align_corners), w, p);
  const float iy = pad_coord(unnormalize(gy, h, p.align_corners), h, p);
  if (p.mode == GridSampleMode::kNearest) return tap(plane, h, w, std::nearbyint(iy), std::nearbyint(ix));
  const float x0 = std::floor(ix), y0 = std::floor(iy);
  const float lx = ix - x0, ly = iy - y0;
  return (1.f - ly) * ((1.f - lx) * tap(plane, h, w, y0, x0) + lx * tap(plane, h, w, y0, x0 + 1.f)) +
         ly * ((1.f - lx) * tap(plane, h, w, y0 + 1.f, x0) + lx * tap(plane, h, w, y0 + 1.f, x0 + 1.f));
}

}  // namespace

void grid_sample_2d_f32(const GridSampleParams& p, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                        const float* x, const float* grid, float* y, ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t in = nc / c;
      const float* plane = x + nc * h * w;
      const float* g = grid + in * oh * ow * 2;
      float* out = y + nc * oh * ow;
      for (int64_t i = 0; i < oh * ow; ++i) out[i] = h > 0 && w > 0 ? sample(p, plane, h, w, g[2 * i], g[2 * i + 1]) : 0.f;
    }
  };
  if (pool) pool->parallel_for(n * c, 1, body);
  else body(0, n * c);
}

void roi_align_f32(const RoiAlignParams& p, int64_t c, int64_t h, int64_t w, int64_t num_rois, const float* x,
                   const float* rois, const int64_t* batch_index, float* y, ThreadPool* pool) {
  const int64_t ph_n = p.output_height, pw_n = p.output_width;
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float off = p.half_pixel ? 0.5f : 0.f;
      const float* roi = rois + r * 4;
      const float x1 = roi[0] * p.spatial_scale - off, y1 = roi[1] * p.spatial_scale - off;
      float rw = roi[2] * p.spatial_scale - off - x1, rh = roi[3] * p.spatial_scale - off - y1;
      if (!p.half_pixel) {  // legacy: rois are at least 1x1
        rw = std::max(rw, 1.f);
        rh = std::max(rh, 1.f);
      }
      const float bin_h = rh / static_cast<float>(ph_n), bin_w = rw / static_cast<float>(pw_n);
      const int64_t gh = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(rh / static_cast<float>(ph_n)));
      const int64_t gw = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(rw / static_cast<float>(pw_n)));
      const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const float* plane = x + (batch_index[r] * c + ch) * h * w;
        float* out = y + (r * c + ch) * ph_n * pw_n;
        for (int64_t ph = 0; ph < ph_n; ++ph)
          for (int64_t pw = 0; pw < pw_n; ++pw) {
            float acc = 0.f;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix) {
                float yy = y1 + static_cast<float>(ph) * bin_h + (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(gh);
                float xx = x1 + static_cast<float>(pw) * bin_w + (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(gw);
                float v[4] = {0.f, 0.f, 0.f, 0.f};  // weighted corner values
                if (!(yy < -1.f || yy > static_cast<float>(h) || xx < -1.f || xx > static_cast<float>(w))) {
                  yy = std::max(yy, 0.f);
                  xx = std::max(xx, 0.f);
                  int64_t y_lo = static_cast<int64_t>(yy), x_lo = static_cast<int64_t>(xx), y_hi, x_hi;
                  if (y_lo >= h - 1) {
                    y_lo = y_hi = h - 1;
                    yy = static_cast<float>(y_lo);
                  } else {
                    y_hi = y_lo + 1;
                  }
                  if (x_lo >= w - 1) {
                    x_lo = x_hi = w - 1;
                    xx = static_cast<float>(x_lo);
                  } else {
                    x_hi = x_lo + 1;
                  }
                  const float ly = yy - static_cast<float>(y_lo), lx = xx - static_cast<float>(x_lo);
                  const float hy = 1.f - ly, hx = 1.f - lx;
                  v[0] = hy * hx * plane[y_lo * w + x_lo];
                  v[1] = hy * lx * plane[y_lo * w + x_hi];
                  v[2] = ly * hx * plane[y_hi * w + x_lo];
                  v[3] = ly * lx * plane[y_hi * w + x_hi];
                }
                if (p.max_mode) {
                  const float m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                } else {
                  acc += v[0] + v[1] + v[2] + v[3];
                }
              }
            out[ph * pw_n + pw] = p.max_mode ? acc : acc / count;
          }
      }
    }
  };
  if (pool) pool->parallel_for(num_rois, 1, body);
  else body(0, num_rois);
}

}  // namespace glassbox::kernels
