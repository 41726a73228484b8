#include "kernels/softmax.h"

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vmath.h"

namespace glassbox::kernels {

namespace {

// Contiguous row (inner == 1): the hot case for attention.
void softmax_row(const float* x, float* y, int64_t n, SoftmaxKind kind) {
  float m = -std::numeric_limits<float>::infinity();
  int64_t arg = 0;
  for (int64_t k = 0; k < n; ++k)
    if (x[k] > m) { m = x[k]; arg = k; }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t k = 0; k < n; ++k) y[k] = k == arg ? 1.f : 0.f;
    return;
  }
  if (std::isinf(m) && m < 0) m = 0;  // all -inf row: avoid inf - inf
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] - m;
  vexp_f32(y, y, n);
  float sum = 0.f;
  for (int64_t k = 0; k < n; ++k) sum += y[k];
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
