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

void sparse_pool(const float* logits, int64_t seq, int64_t vocab, const std::vector<uint32_t>& mask, const SparseHead& head,
                 std::vector<uint32_t>& indices, std::vector<float>& values) {
  const int64_t n = std::min<int64_t>(seq, static_cast<int64_t>(mask.size()));
  const bool sum = head.pooling == "sum", twice = head.activation == "log1p_relu";
  std::vector<double> acc(static_cast<size_t>(vocab), 0.0);  // a masked position gives log1p(relu(0)) = 0
  for (int64_t t = 0; t < n; ++t) {
    if (mask[t] == 0) continue;
    const float* row = logits + t * vocab;
    for (int64_t v = 0; v < vocab; ++v) {
      if (!(row[v] > 0.0f)) continue;  // relu: 0 adds nothing to a sum and never beats the max's 0
      double w = std::log1p(static_cast<double>(row[v]));
      if (twice) w = std::log1p(w);
      acc[v] = sum ? acc[v] + w : std::max(acc[v], w);
    }
  }
  indices.clear();
  values.clear();
  for (int64_t v = 0; v < vocab; ++v)
    if (static_cast<float>(acc[v]) > 0.0f) indices.push_back(static_cast<uint32_t>(v));
  if (head.top_k > 0 && static_cast<int64_t>(indices.size()) > head.top_k) {
    std::stable_sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) { return acc[a] > acc[b]; });
    indices.resize(static_cast<size_t>(head.top_k));
    std::sort(indices.begin(), indices.end());
  }
  for (uint32_t v : indices) values.push_back(static_cast<float>(acc[v]));
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
