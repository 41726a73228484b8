#include "kernels/layer_norm.h"

#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/vmath.h"

namespace glassbox::kernels {

namespace x86 {  // x86/rows_avx512.cpp, x86/vmath_avx512.cpp
bool avx512_available();
void layer_norm_row_avx512(const float* x, int64_t n, const float* gamma, const float* beta, float eps, float* y);
}  // namespace x86

namespace {

const bool kAvx512 = x86::avx512_available();  // the same row arithmetic, 16 lanes per instruction

constexpr int kLanes = 16;

float lane_sum(const float* x, int64_t n, float shift) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l] - shift;
  float s = 0;
  for (; i < n; ++i) s += x[i] - shift;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

float lane_sq_sum(const float* x, int64_t n, float mean) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - mean;
      acc[l] += d * d;
    }
  float s = 0;
  for (; i < n; ++i) s += (x[i] - mean) * (x[i] - mean);
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

}  // namespace

void layer_norm_row_f32_scalar(const float* xr, int64_t cols, const float* gamma, const float* beta, float eps,
                               float* yr) {
  // Shifting by the first element keeps the sum small when the row has a large offset.
  const float shift = xr[0];
  const float mean = shift + lane_sum(xr, cols, shift) / static_cast<float>(cols);
  const float var = lane_sq_sum(xr, cols, mean) / static_cast<float>(cols);
  const float inv = 1.f / std::sqrt(var + eps);
  for (int64_t i = 0; i < cols; ++i) yr[i] = (xr[i] - mean) * inv * gamma[i] + beta[i];
}

void layer_norm_row_f32(const float* x, int64_t cols, const float* gamma, const float* beta, float eps, float* y) {
  (kAvx512 ? x86::layer_norm_row_avx512 : layer_norm_row_f32_scalar)(x, cols, gamma, beta, eps, y);
}

void layer_norm_rows_f32(int64_t rows, int64_t cols, const float* x, const float* gamma, const float* beta, float eps,
                         float* y, ThreadPool* pool) {
  if (cols <= 0) return;
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) layer_norm_row_f32(x + r * cols, cols, gamma, beta, eps, y + r * cols);
  };
  const int64_t grain = std::max<int64_t>(1, 16384 / cols);
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

void gelu_erf_f32(const float* x, float* y, int64_t n, ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) { vgelu_erf_f32(x + b, y + b, e - b); };
  if (pool && n > 32768) pool->parallel_for(n, 32768, body);
  else body(0, n);
}

}  // namespace glassbox::kernels
