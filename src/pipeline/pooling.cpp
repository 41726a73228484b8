#include "pipeline/pooling.h"

#include <algorithm>
#include <cmath>

namespace glassbox::pipeline {

void pool_tokens(const float* tokens, int64_t seq, int64_t hidden, const std::vector<uint32_t>& mask, int64_t skip_leading,
                 const std::vector<Pooling>& modes, std::vector<float>& out) {
  const int64_t n = std::min<int64_t>(seq, static_cast<int64_t>(mask.size()));
  auto real = [&](int64_t t) { return t >= skip_leading && t < n && mask[t] != 0; };
  std::vector<double> acc(hidden);
  for (Pooling mode : modes) {
    std::fill(acc.begin(), acc.end(), 0.0);
    double weight = 0;
    int64_t last = -1;
    switch (mode) {
      case Pooling::kCls:
      case Pooling::kNone:
        for (int64_t h = 0; h < hidden; ++h) acc[h] = tokens[h];
        break;
      case Pooling::kMax:
        std::fill(acc.begin(), acc.end(), -1e9);  // what sentence-transformers gives masked positions
        for (int64_t t = 0; t < n; ++t)
          if (real(t))
            for (int64_t h = 0; h < hidden; ++h) acc[h] = std::max(acc[h], static_cast<double>(tokens[t * hidden + h]));
        break;
      case Pooling::kMean:
      case Pooling::kMeanSqrtLen:
      case Pooling::kWeightedMean:
        for (int64_t t = 0; t < n; ++t) {
          if (!real(t)) continue;
          const double w = mode == Pooling::kWeightedMean ? static_cast<double>(t + 1) : 1.0;
          weight += w;
          for (int64_t h = 0; h < hidden; ++h) acc[h] += w * tokens[t * hidden + h];
        }
        weight = std::max(weight, 1e-9);
        if (mode == Pooling::kMeanSqrtLen) weight = std::sqrt(weight);
        for (double& v : acc) v /= weight;
        break;
      case Pooling::kLastToken:
        for (int64_t t = 0; t < n; ++t)
          if (real(t)) last = t;
        if (last >= 0)
          for (int64_t h = 0; h < hidden; ++h) acc[h] = tokens[last * hidden + h];
        break;
    }
    for (double v : acc) out.push_back(static_cast<float>(v));
  }
}

void apply_dense(const DenseLayer& l, std::vector<float>& v) {
  std::vector<float> y(static_cast<size_t>(l.out));
  for (int64_t o = 0; o < l.out; ++o) {
    double s = l.bias.empty() ? 0.0 : l.bias[o];
    const float* w = l.weight.data() + o * l.in;
    for (int64_t i = 0; i < l.in; ++i) s += static_cast<double>(w[i]) * v[i];
    if (l.activation == "tanh") s = std::tanh(s);
    else if (l.activation == "relu") s = std::max(s, 0.0);
    else if (l.activation == "sigmoid") s = 1.0 / (1.0 + std::exp(-s));
    else if (l.activation == "gelu") s = 0.5 * s * (1.0 + std::erf(s / std::sqrt(2.0)));
    y[o] = static_cast<float>(s);  // "identity": as is (names are checked when the module is read)
  }
  v = std::move(y);
}

void l2_normalize(std::vector<float>& v) {
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  norm = std::max(std::sqrt(norm), 1e-12);
  for (float& x : v) x = static_cast<float>(x / norm);
}

}  // namespace glassbox::pipeline
