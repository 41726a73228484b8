// layer_norm_rows_quantize_u8: LayerNorm rows and DynamicQuantizeLinear of the result in two
// parallel passes instead of three (LayerNorm; min/max; quantize) and one op instead of two.
// Pass 1 normalizes each row and takes its min/max while it is in cache; the per-row ranges
// reduce to the tensor's (min/max are exact, the order does not matter); pass 2 quantizes.
// The arithmetic is the two ops' own (layer_norm_row_f32, minmax_f32, dynamic_u8_params,
// quantize_f32_u8), so every output equals theirs bit for bit.
#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/layer_norm.h"
#include "kernels/quantize.h"

namespace glassbox::kernels {

void layer_norm_rows_quantize_u8(int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta,
                                 float eps, float* y, uint8_t* q, float* scale, int32_t* zero_point, ThreadPool* pool) {
  const int64_t n = rows * cols;
  std::vector<float> lo(static_cast<size_t>(std::max<int64_t>(rows, 1)), 0.f), hi(lo.size(), 0.f);
  auto normalize = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      layer_norm_row_f32(x + r * cols, cols, gamma, beta, eps, y + r * cols);
      minmax_f32(y + r * cols, cols, &lo[static_cast<size_t>(r)], &hi[static_cast<size_t>(r)]);
    }
  };
  if (cols > 0) {
    const int64_t grain = std::max<int64_t>(1, 16384 / cols);  // as layer_norm_rows_f32
    if (pool && rows > grain) pool->parallel_for(rows, grain, normalize);
    else normalize(0, rows);
  }
  dynamic_u8_params(*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end()), scale,
                    zero_point);
  quantize_f32_u8_parallel(y, n, *scale, *zero_point, q, pool);  // chunked as DynamicQuantizeLinear
}

}  // namespace glassbox::kernels
