// Loss kernels (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) over an
// [N, C, D] view of the input, D = product of the dims after C (1 for [N, C]).
// Plain loops with double accumulation: these ops are small and rare.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace glassbox::kernels {

// loss[n, d] = -weight[t] * x[n, t, d] with t = target[n, d]; 0 where t equals
// ignore_index (when use_ignore). weight may be nullptr (all ones). Adds the
// weight of every counted element to *weight_sum (the divisor of reduction
// "mean"). Returns the flat target position of the first t outside [0, C) that
// is not ignored, or -1 when all targets are valid (loss is then complete).
template <class T, class I>
int64_t nll_loss(const T* x, const I* target, const T* weight, int64_t N, int64_t C, int64_t D, bool use_ignore,
                 int64_t ignore_index, T* loss, double* weight_sum) {
  double wsum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t pos = n * D + d;
      const int64_t t = static_cast<int64_t>(target[pos]);
      if (use_ignore && t == ignore_index) {
        loss[pos] = T(0);
        continue;
      }
      if (t < 0 || t >= C) return pos;
      const double w = weight ? static_cast<double>(weight[t]) : 1.0;
      loss[pos] = static_cast<T>(-w * static_cast<double>(x[(n * C + t) * D + d]));
      wsum += w;
    }
  *weight_sum += wsum;
  return -1;
}

// y = log(softmax(x)) along the middle axis of [outer, n, inner].
template <class T>
void log_softmax_middle(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* xr = x + o * n * inner + i;
      T* yr = y + o * n * inner + i;
      double mx = -INFINITY;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, static_cast<double>(xr[k * inner]));
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(xr[k * inner]) - mx);
      const double lse = mx + std::log(sum);
      for (int64_t k = 0; k < n; ++k) yr[k * inner] = static_cast<T>(static_cast<double>(xr[k * inner]) - lse);
    }
}

}  // namespace glassbox::kernels
