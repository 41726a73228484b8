// Separable resize (float32): each resized axis is one 1-D pass with
// precomputed taps (source index + weight per output position).
#pragma once

#include <cstdint>
#include <vector>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordMode { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple /* Upsample / Resize-10 */ };

struct ResizeAxisParams {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float scale = 1.f;                       // output / input
  float roi_start = 0.f, roi_end = 1.f;    // tf_crop_and_resize only
};

// Taps for one axis: out_dim * taps entries; index -1 = extrapolation value.
struct ResizeTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

ResizeTaps resize_taps(const ResizeAxisParams& p, int64_t in_dim, int64_t out_dim);

// x [outer, in_dim, inner] -> y [outer, out_dim, inner].
void resize_axis_f32(int64_t outer, int64_t in_dim, int64_t out_dim, int64_t inner, const ResizeTaps& taps,
                     float extrapolation_value, const float* x, float* y, ThreadPool* pool);

}  // namespace glassbox::kernels
