// Discrete Fourier transform of one complex signal (double precision):
// radix-2 FFT when the length is a power of two, else a direct O(n^2) sum over
// precomputed twiddles (exact-index, so no accumulated angle error).
#pragma once

#include <cstdint>
#include <vector>

namespace glassbox::kernels {

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
};

}  // namespace glassbox::kernels
