#include "kernels/vmath.h"

#include <algorithm>
#include <cmath>

namespace glassbox::kernels {

namespace x86 {
bool avx2_available();
void vexp_f32_avx2(const float* x, float* y, int64_t n);
void vtanh_f32_avx2(const float* x, float* y, int64_t n);
void verf_f32_avx2(const float* x, float* y, int64_t n);
void vsigmoid_f32_avx2(const float* x, float* y, int64_t n);
bool avx512_available();
void vexp_f32_avx512(const float* x, float* y, int64_t n);
void verf_f32_avx512(const float* x, float* y, int64_t n);
void vgelu_erf_f32_avx512(const float* x, float* y, int64_t n);
}  // namespace x86

void vexp_f32_reference(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void vtanh_f32_reference(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
void verf_f32_reference(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]);
}
void vsigmoid_f32_reference(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= 0 ? 1.f / (1.f + std::exp(-x[i])) : std::exp(x[i]) / (1.f + std::exp(x[i]));
}

namespace {
const bool kAvx2 = x86::avx2_available();
const bool kAvx512 = kAvx2 && x86::avx512_available();  // exp / erf: the AVX2 math, 16 lanes, same results
}

void vexp_f32(const float* x, float* y, int64_t n) {
  kAvx512 ? x86::vexp_f32_avx512(x, y, n) : kAvx2 ? x86::vexp_f32_avx2(x, y, n) : vexp_f32_reference(x, y, n);
}
void vtanh_f32(const float* x, float* y, int64_t n) { kAvx2 ? x86::vtanh_f32_avx2(x, y, n) : vtanh_f32_reference(x, y, n); }
void verf_f32(const float* x, float* y, int64_t n) {
  kAvx512 ? x86::verf_f32_avx512(x, y, n) : kAvx2 ? x86::verf_f32_avx2(x, y, n) : verf_f32_reference(x, y, n);
}
void vgelu_erf_f32(const float* x, float* y, int64_t n) {
  if (kAvx512) return x86::vgelu_erf_f32_avx512(x, y, n);
  constexpr int64_t kBlock = 1024;  // erf into a stack block, then combine: one pass over y
  float t[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    for (int64_t i = 0; i < m; ++i) t[i] = x[s + i] * 0.70710678118654752f;
    verf_f32(t, t, m);
    for (int64_t i = 0; i < m; ++i) y[s + i] = 0.5f * x[s + i] * (1.f + t[i]);
  }
}
void vsigmoid_f32(const float* x, float* y, int64_t n) {
  kAvx2 ? x86::vsigmoid_f32_avx2(x, y, n) : vsigmoid_f32_reference(x, y, n);
}

}  // namespace glassbox::kernels
