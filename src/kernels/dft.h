// Discrete Fourier transform of one complex signal (double precision):
// radix-2 FFT when the length is a power of two; other lengths up to
// kDirectDftMax use a direct sum over exact-index twiddles, longer ones
// Bluestein's chirp-z transform (a power-of-two convolution), so every length
// costs O(n log n).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace glassbox::kernels {

inline constexpr int64_t kDirectDftMax = 64;

class DftPlan {
 public:
  // inverse: e^{+2 pi i jk / n} and a 1/n scale (ONNX DFT inverse = 1).
  DftPlan(int64_t n, bool inverse);
  int64_t size() const { return n_; }
  // in, out: n complex values as interleaved (re, im); must not overlap.
  void run(const double* in, double* out) const;

 private:
  int64_t n_;
  bool inverse_;
  bool pow2_;
  std::vector<double> tw_;  // twiddle m: (cos, sin) of -+2 pi m / n, m in [0, n)
  // Bluestein: chirp c_j = e^{-+i pi j^2 / n}, the FFT of the conjugate chirp filter, and
  // forward / inverse power-of-two plans of the convolution length.
  std::vector<double> chirp_, filter_fft_;
  std::unique_ptr<DftPlan> conv_fwd_, conv_inv_;

};

}  // namespace glassbox::kernels
