#include "kernels/norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {

void layer_norm_f32(int64_t rows, int64_t cols, const float* x, const float* scale, bool scale_scalar,
                    const float* bias, bool bias_scalar, float eps, float* y, float* mean, float* inv_std,
                    ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      // Two passes in double-free float with a shifted mean: stable enough for fp32 encoders.
      double sum = 0.0;
      for (int64_t i = 0; i < cols; ++i) sum += xr[i];
      const float m = cols ? static_cast<float>(sum / static_cast<double>(cols)) : 0.f;
      double sq = 0.0;
      for (int64_t i = 0; i < cols; ++i) {
        const float d = xr[i] - m;
        sq += static_cast<double>(d) * d;
      }
      const float var = cols ? static_cast<float>(sq / static_cast<double>(cols)) : 0.f;
      const float inv = 1.f / std::sqrt(var + eps);
      for (int64_t i = 0; i < cols; ++i) {
        const float s = scale_scalar ? scale[0] : scale[i];
        const float bb = bias ? (bias_scalar ? bias[0] : bias[i]) : 0.f;
        yr[i] = (xr[i] - m) * inv * s + bb;
      }
      if (mean) mean[r] = m;
      if (inv_std) inv_std[r] = inv;
    }
  };
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, cols));
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

void batch_norm_f32(int64_t n, int64_t c, int64_t spatial, const float* x, const float* scale, const float* bias,
                    const float* mean, const float* var, float eps, float* y, ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t ch = k % c;
      const float a = scale[ch] / std::sqrt(var[ch] + eps);
      const float off = bias[ch] - mean[ch] * a;
      const float* xp = x + k * spatial;
      float* yp = y + k * spatial;
      for (int64_t i = 0; i < spatial; ++i) yp[i] = xp[i] * a + off;
    }
  };
  const int64_t rows = n * c;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, spatial));
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

void instance_norm_f32(int64_t n, int64_t c, int64_t spatial, const float* x, const float* scale, const float* bias,
                       float eps, float* y, ThreadPool* pool) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t ch = k % c;
      const float* xp = x + k * spatial;
      float* yp = y + k * spatial;
      double sum = 0.0;
      for (int64_t i = 0; i < spatial; ++i) sum += xp[i];
      const double m = spatial ? sum / static_cast<double>(spatial) : 0.0;
      double sq = 0.0;
      for (int64_t i = 0; i < spatial; ++i) sq += (xp[i] - m) * (xp[i] - m);
      const double var = spatial ? sq / static_cast<double>(spatial) : 0.0;
      const float a = static_cast<float>(scale[ch] / std::sqrt(var + eps));
      const float off = static_cast<float>(bias[ch] - m * a);
      for (int64_t i = 0; i < spatial; ++i) yp[i] = xp[i] * a + off;
    }
  };
  const int64_t rows = n * c;
  if (pool && rows > 1) pool->parallel_for(rows, 1, body);
  else body(0, rows);
}

// In ONNX Runtime's order (its lrn.cc), so Inf and NaN go where they go there: the squares padded with
// zeros, the first channel's scale = bias + the sum of its window, each next channel's = the previous
// one + the entering square - the leaving one (a running sum: once an Inf has entered, Inf - Inf = NaN
// for every later channel of that position), then y = x * scale^-beta.
void lrn_f32(int64_t n, int64_t c, int64_t spatial, const float* x, int64_t size, float alpha, float beta,
             float bias, float* y) {
  const int64_t lo = (size - 1) / 2;
  const float a = alpha / static_cast<float>(size);
  std::vector<float> padded(static_cast<size_t>((c + size - 1) * spatial), 0.f);
  std::vector<float> scale(static_cast<size_t>(c * spatial));
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * c * spatial;
    float* sq = padded.data() + lo * spatial;
    for (int64_t j = 0; j < c * spatial; ++j) sq[j] = xb[j] * xb[j];
    std::fill(scale.begin(), scale.begin() + spatial, bias);
    for (int64_t k = 0; k < size; ++k)
      for (int64_t i = 0; i < spatial; ++i) scale[i] += a * padded[k * spatial + i];
    for (int64_t ch = 1; ch < c; ++ch) {
      float* s = scale.data() + ch * spatial;
      const float* head = padded.data() + (ch + size - 1) * spatial;
      const float* tail = padded.data() + (ch - 1) * spatial;
      for (int64_t i = 0; i < spatial; ++i) {
        s[i] = s[i - spatial] + a * head[i];
        s[i] = s[i] + -a * tail[i];
      }
    }
    float* yb = y + b * c * spatial;
    for (int64_t j = 0; j < c * spatial; ++j) yb[j] = xb[j] * std::pow(scale[j], -beta);
  }
}

void lp_norm_f32(int64_t outer, int64_t axis_dim, int64_t inner, const float* x, int64_t p, float* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* xp = x + o * axis_dim * inner + i;
      float* yp = y + o * axis_dim * inner + i;
      double acc = 0.0;
      for (int64_t k = 0; k < axis_dim; ++k) acc += p == 1 ? std::fabs(xp[k * inner]) : xp[k * inner] * xp[k * inner];
      const double norm = p == 1 ? acc : std::sqrt(acc);
      for (int64_t k = 0; k < axis_dim; ++k) yp[k * inner] = norm == 0.0 ? 0.f : static_cast<float>(xp[k * inner] / norm);
    }
}

}  // namespace glassbox::kernels
