// Determinant of a square matrix by LU decomposition with partial pivoting,
// in double precision on a caller-provided n*n scratch copy.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

namespace glassbox::kernels {

template <class T>
double determinant(const T* a, int64_t n, double* lu) {
  for (int64_t i = 0; i < n * n; ++i) lu[i] = static_cast<double>(a[i]);
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::fabs(lu[i * n + k]) > std::fabs(lu[p * n + k])) p = i;
    if (lu[p * n + k] == 0.0) return 0.0;  // singular (NaN pivots fall through and propagate)
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(lu[k * n + j], lu[p * n + j]);
      det = -det;
    }
    const double piv = lu[k * n + k];
    det *= piv;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = lu[i * n + k] / piv;
      for (int64_t j = k + 1; j < n; ++j) lu[i * n + j] -= f * lu[k * n + j];
    }
  }
  return det;
}

}  // namespace glassbox::kernels
