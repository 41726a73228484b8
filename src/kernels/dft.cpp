#include "kernels/dft.h"

#include <cmath>
#include <numbers>

namespace glassbox::kernels {

DftPlan::DftPlan(int64_t n, bool inverse) : n_(n), inverse_(inverse), pow2_(n > 0 && (n & (n - 1)) == 0) {
  if (!pow2_ && n > kDirectDftMax) {
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    conv_fwd_ = std::make_unique<DftPlan>(m, false);
    conv_inv_ = std::make_unique<DftPlan>(m, true);
    const double sign = inverse ? 1.0 : -1.0;
    chirp_.resize(static_cast<size_t>(2 * n));
    for (int64_t j = 0; j < n; ++j) {
      const int64_t sq = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) % (2 * static_cast<uint64_t>(n)));
      const double a = sign * std::numbers::pi * static_cast<double>(sq) / static_cast<double>(n);
      chirp_[2 * j] = std::cos(a);
      chirp_[2 * j + 1] = std::sin(a);
    }
    std::vector<double> filter(static_cast<size_t>(2 * m), 0.0);  // conj(chirp) at +-j, circularly
    for (int64_t j = 0; j < n; ++j) {
      filter[2 * j] = chirp_[2 * j];
      filter[2 * j + 1] = -chirp_[2 * j + 1];
      if (j > 0) {
        filter[2 * (m - j)] = chirp_[2 * j];
        filter[2 * (m - j) + 1] = -chirp_[2 * j + 1];
      }
    }
    filter_fft_.resize(static_cast<size_t>(2 * m));
    conv_fwd_->run(filter.data(), filter_fft_.data());
    return;
  }
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
  if (conv_fwd_) {
    // X_k = c_k * sum_j (x_j c_j) conj(c_{k-j}): a circular convolution of length m.
    const int64_t m = conv_fwd_->size();
    std::vector<double> a(static_cast<size_t>(2 * m), 0.0), fa(static_cast<size_t>(2 * m));
    for (int64_t j = 0; j < n; ++j) {
      const double cr = chirp_[2 * j], ci = chirp_[2 * j + 1];
      a[2 * j] = in[2 * j] * cr - in[2 * j + 1] * ci;
      a[2 * j + 1] = in[2 * j] * ci + in[2 * j + 1] * cr;
    }
    conv_fwd_->run(a.data(), fa.data());
    for (int64_t k = 0; k < m; ++k) {
      const double xr = fa[2 * k], xi = fa[2 * k + 1], fr = filter_fft_[2 * k], fi = filter_fft_[2 * k + 1];
      fa[2 * k] = xr * fr - xi * fi;
      fa[2 * k + 1] = xr * fi + xi * fr;
    }
    conv_inv_->run(fa.data(), a.data());
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    for (int64_t k = 0; k < n; ++k) {
      const double cr = chirp_[2 * k], ci = chirp_[2 * k + 1];
      out[2 * k] = (a[2 * k] * cr - a[2 * k + 1] * ci) * scale;
      out[2 * k + 1] = (a[2 * k] * ci + a[2 * k + 1] * cr) * scale;
    }
    return;
  }
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
