#include "kernels/softmax.h"

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vmath.h"

namespace glassbox::kernels {

namespace x86 {  // x86/rows_avx512.cpp, x86/vmath_avx512.cpp
bool avx512_available();
void scaled_masked_softmax_row_avx512(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                      float scale);
}  // namespace x86

namespace {

const bool kAvx512 = x86::avx512_available();  // the same row arithmetic, three passes instead of six

// Max and sum in 16 independent lanes: GCC vectorizes these (a single running
// max/sum is a serial dependency it may not reorder). NaN compares false, so it
// is skipped by the max exactly as in a sequential scan.
constexpr int kLanes = 16;

float row_max(const float* x, int64_t n) {
  float acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = -std::numeric_limits<float>::infinity();
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = x[k + l] > acc[l] ? x[k + l] : acc[l];
  float m = -std::numeric_limits<float>::infinity();
  for (; k < n; ++k) m = x[k] > m ? x[k] : m;
  for (int l = 0; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
  return m;
}

float row_sum(const float* y, int64_t n) {
  float acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += y[k + l];
  float s = 0.f;
  for (; k < n; ++k) s += y[k];
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Contiguous row (inner == 1): the hot case for attention.
void softmax_row(const float* x, float* y, int64_t n, SoftmaxKind kind) {
  if (kind == SoftmaxKind::kHardmax) {
    float m = -std::numeric_limits<float>::infinity();
    int64_t arg = 0;
    for (int64_t k = 0; k < n; ++k)
      if (x[k] > m) { m = x[k]; arg = k; }
    for (int64_t k = 0; k < n; ++k) y[k] = k == arg ? 1.f : 0.f;
    return;
  }
  float m = row_max(x, n);
  if (std::isinf(m) && m < 0) m = 0;  // all -inf row: avoid inf - inf
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] - m;
  vexp_f32(y, y, n);
  const float sum = row_sum(y, n);
  if (kind == SoftmaxKind::kSoftmax) {
    const float inv = 1.f / sum;
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  } else {
    const float lse = m + std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - lse;
  }
}

}  // namespace

void softmax_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t begin, int64_t end, SoftmaxKind kind) {
  if (inner == 1) {
    for (int64_t r = begin; r < end; ++r) softmax_row(x + r * n, y + r * n, n, kind);
    return;
  }
  std::vector<float> row(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int64_t r = begin; r < end; ++r) {
    const int64_t o = r / inner, i = r % inner;
    const float* p = x + o * n * inner + i;
    float* q = y + o * n * inner + i;
    for (int64_t k = 0; k < n; ++k) row[k] = p[k * inner];
    softmax_row(row.data(), out.data(), n, kind);
    for (int64_t k = 0; k < n; ++k) q[k * inner] = out[k];
  }
}

void scaled_masked_softmax_row_f32(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                   float scale) {
  if (kAvx512 && n > 0) return x86::scaled_masked_softmax_row_avx512(x, mask, mask_stride, y, n, scale);
  scaled_masked_softmax_row_f32_scalar(x, mask, mask_stride, y, n, scale);
}

void scaled_masked_softmax_row_f32_scalar(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                          float scale) {
  if (mask_stride == 1)
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] * scale + mask[k];
  else
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] * scale + mask[0];
  softmax_row(y, y, n, SoftmaxKind::kSoftmax);
}

void softmax_f32_reference(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, SoftmaxKind kind) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* p = x + o * n * inner + i;
      float* q = y + o * n * inner + i;
      double m = -INFINITY;
      int64_t arg = 0;
      for (int64_t k = 0; k < n; ++k)
        if (p[k * inner] > m) { m = p[k * inner]; arg = k; }
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(p[k * inner]) - m);
      for (int64_t k = 0; k < n; ++k) {
        const double v = p[k * inner];
        q[k * inner] = kind == SoftmaxKind::kHardmax ? (k == arg ? 1.f : 0.f)
                       : kind == SoftmaxKind::kSoftmax ? static_cast<float>(std::exp(v - m) / s)
                                                       : static_cast<float>(v - m - std::log(s));
      }
    }
}

}  // namespace glassbox::kernels
