// Sampling kernels (float32, NCHW): GridSample and RoiAlign.
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

enum class GridSampleMode { kBilinear, kNearest, kBicubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kBilinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};

// x [n, c, h, w], grid [n, oh, ow, 2] holding (x, y) in [-1, 1] -> y [n, c, oh, ow].
void grid_sample_2d_f32(const GridSampleParams& p, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                        const float* x, const float* grid, float* y, ThreadPool* pool);

struct RoiAlignParams {
  bool max_mode = false;         // false: average of the samples; true: max of the weighted corner values
  bool half_pixel = true;        // coordinate_transformation_mode half_pixel (false: output_half_pixel)
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t sampling_ratio = 0;    // samples per bin side; 0 = ceil(roi size / output size)
  float spatial_scale = 1.f;
};

// x [n, c, h, w], rois [num_rois, 4] (x1, y1, x2, y2), batch_index [num_rois] (each in [0, n))
// -> y [num_rois, c, output_height, output_width].
void roi_align_f32(const RoiAlignParams& p, int64_t c, int64_t h, int64_t w, int64_t num_rois, const float* x,
                   const float* rois, const int64_t* batch_index, float* y, ThreadPool* pool);

}  // namespace glassbox::kernels
