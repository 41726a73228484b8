#include "generation/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace glassbox::generation {

namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// transformers' RepetitionPenaltyLogitsProcessor: each distinct id seen is divided by the penalty
// when positive, multiplied when negative.
void apply_repetition_penalty(std::span<float> logits, std::span<const uint32_t> context, double penalty) {
  if (penalty == 1.0) return;
  std::vector<uint32_t> seen(context.begin(), context.end());
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  const float p = static_cast<float>(penalty);
  for (uint32_t id : seen) {
    if (id >= logits.size()) continue;
    float& l = logits[id];
    l = l > 0 ? l / p : l * p;
  }
}

uint32_t argmax(std::span<const float> logits) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<uint32_t>(best);
}

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

NonFinite count_non_finite(std::span<const float> logits) {
  NonFinite n;
  for (float v : logits) {
    if (std::isnan(v)) ++n.nan;
    else if (std::isinf(v)) ++n.inf;
  }
  return n;
}

uint32_t choose_token(std::span<float> logits, std::span<const uint32_t> context, const GenerationPolicy& policy, Rng& rng) {
  apply_repetition_penalty(logits, context, policy.repetition_penalty.value);
  if (!policy.do_sample.value) return argmax(logits);
  // Candidates sorted by logit, highest first; equal logits by id so the order never depends on the sort.
  const size_t v = logits.size();
  std::vector<uint32_t> order(v);
  std::iota(order.begin(), order.end(), 0u);
  auto higher = [&](uint32_t a, uint32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  size_t keep = v;
  const int64_t top_k = policy.top_k.value;
  if (top_k > 0 && static_cast<size_t>(top_k) < v) {
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(), higher);
    // transformers keeps every token whose logit equals the k-th one.
    const float kth = logits[order[top_k - 1]];
    keep = static_cast<size_t>(top_k);
    std::sort(order.begin() + top_k, order.end(), higher);
    while (keep < v && logits[order[keep]] == kth) ++keep;
  } else {
    std::sort(order.begin(), order.end(), higher);
  }
  // Probabilities of the kept candidates at the temperature, in double.
  const double inv_t = 1.0 / policy.temperature.value;
  const double top = static_cast<double>(logits[order[0]]) * inv_t;
  std::vector<double> prob(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += prob[i] = std::exp(static_cast<double>(logits[order[i]]) * inv_t - top);
  for (auto& p : prob) p /= sum;
  // top_p: the smallest prefix whose mass reaches top_p (at least one token).
  if (policy.top_p.value < 1.0) {
    double cum = 0;
    size_t n = 0;
    while (n < keep) {
      cum += prob[n++];
      if (cum >= policy.top_p.value) break;
    }
    keep = std::max<size_t>(n, 1);
  }
  // min_p: tokens at least min_p times as likely as the most likely one.
  if (policy.min_p.value > 0) {
    const double floor = policy.min_p.value * prob[0];
    size_t n = 1;
    while (n < keep && prob[n] >= floor) ++n;
    keep = n;
  }
  double mass = 0;
  for (size_t i = 0; i < keep; ++i) mass += prob[i];
  const double u = rng.uniform() * mass;
  double cum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cum += prob[i];
    if (u < cum) return order[i];
  }
  return order[keep - 1];
}

}  // namespace glassbox::generation
