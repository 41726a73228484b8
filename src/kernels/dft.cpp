#include "kernels/dft.h"

#include <cmath>
#include <numbers>

namespace glassbox::kernels {

DftPlan::DftPlan(int64_t n, bool inverse) : n_(n), inverse_(inverse), pow2_(n > 0 && (n & (n - 1)) == 0) {
  tw_.resize(static_cast<size_t>(2 * n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t m = 0; m < n; ++m) {
    const double a = sign * 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
    tw_[2 * m] = std::cos(a);
    tw_[2 * m + 1] = std::sin(a);
  }
}

void DftPlan::run(const double* in, double* out) const {
  const int64_t n = n_;
  if (n == 0) return;
  if (pow2_) {
    int bits = 0;
    while ((int64_t{1} << bits) < n) ++bits;
    for (int64_t i = 0; i < n; ++i) {  // bit-reversed copy
      int64_t r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      out[2 * r] = in[2 * i];
      out[2 * r + 1] = in[2 * i + 1];
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      const int64_t half = len / 2, step = n / len;
      for (int64_t s = 0; s < n; s += len)
        for (int64_t k = 0; k < half; ++k) {
          const double wr = tw_[2 * k * step], wi = tw_[2 * k * step + 1];
          double* a = out + 2 * (s + k);
          double* b = out + 2 * (s + k + half);
          const double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
          b[0] = a[0] - br;
          b[1] = a[1] - bi;
          a[0] += br;
          a[1] += bi;
        }
    }
  } else {
    for (int64_t k = 0; k < n; ++k) {
      double re = 0.0, im = 0.0;
      int64_t m = 0;  // (j * k) mod n, kept exact
      for (int64_t j = 0; j < n; ++j) {
        const double wr = tw_[2 * m], wi = tw_[2 * m + 1];
        re += in[2 * j] * wr - in[2 * j + 1] * wi;
        im += in[2 * j] * wi + in[2 * j + 1] * wr;
        m += k;
        if (m >= n) m -= n;
      }
      out[2 * k] = re;
      out[2 * k + 1] = im;
    }
  }
  if (inverse_) {
    const double scale = 1.0 / static_cast<double>(n);
    for (int64_t i = 0; i < 2 * n; ++i) out[i] *= scale;
  }
}

}  // namespace glassbox::kernels
