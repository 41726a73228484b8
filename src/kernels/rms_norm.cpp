#include "kernels/rms_norm.h"

#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"

namespace glassbox::kernels {

void rms_norm_rows_f32(int64_t rows, int64_t cols, const float* x, const float* gamma, float eps, float* y,
                       float* inv_std, ThreadPool* pool) {
  auto run = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      double sum_sq = 0;
      for (int64_t c = 0; c < cols; ++c) sum_sq += static_cast<double>(xr[c]) * xr[c];
      const double rms = std::sqrt(sum_sq / static_cast<double>(cols) + eps);
      const float rms_f = static_cast<float>(rms);
      float* yr = y + r * cols;
      for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] / rms_f * gamma[c];  // x / rms * gamma, as ORT's CPU kernel
      if (inv_std) inv_std[r] = static_cast<float>(1.0 / rms);
    }
  };
  if (pool) pool->parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols)), run);
  else run(0, rows);
}

}  // namespace glassbox::kernels
