// The sampler against the arithmetic it claims (transformers' processors), with fixed seeds.
#include "generation/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using glassbox::GenerationPolicy;
using glassbox::generation::choose_token;
using glassbox::generation::Rng;

GenerationPolicy policy(bool sample) {
  GenerationPolicy p;
  p.do_sample.value = sample;
  p.temperature.value = 1.0;
  p.top_k.value = 0;
  p.top_p.value = 1.0;
  p.min_p.value = 0.0;
  p.repetition_penalty.value = 1.0;
  return p;
}

// Frequencies of `draws` samples from `probs` (logits = log probs).
std::vector<double> frequencies(const std::vector<double>& probs, const GenerationPolicy& p, uint64_t seed, int draws) {
  Rng rng(seed);
  std::vector<int> count(probs.size(), 0);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> logits;
    for (double q : probs) logits.push_back(static_cast<float>(std::log(q)));
    ++count[choose_token(logits, {}, p, rng)];
  }
  std::vector<double> f;
  for (int c : count) f.push_back(static_cast<double>(c) / draws);
  return f;
}

TEST(Sampler, GreedyTakesTheFirstMaximum) {
  std::vector<float> logits{1, 3, 3, 2};
  Rng rng(1);
  EXPECT_EQ(choose_token(logits, {}, policy(false), rng), 1u);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  auto p = policy(false);
  p.repetition_penalty.value = 2.0;
  std::vector<float> logits{3, 2, -1};
  const std::vector<uint32_t> context{0, 2, 0};
  Rng rng(1);
  EXPECT_EQ(choose_token(logits, context, p, rng), 1u);  // 3 -> 1.5 falls below 2
  EXPECT_FLOAT_EQ(logits[0], 1.5f);
  EXPECT_FLOAT_EQ(logits[1], 2.0f);
  EXPECT_FLOAT_EQ(logits[2], -2.0f);
}

TEST(Sampler, SamplesTheSoftmaxDistribution) {
  const auto f = frequencies({0.5, 0.3, 0.2}, policy(true), 7, 20000);
  EXPECT_NEAR(f[0], 0.5, 0.015);
  EXPECT_NEAR(f[1], 0.3, 0.015);
  EXPECT_NEAR(f[2], 0.2, 0.015);
}

TEST(Sampler, TopKTopPMinPCutTheTail) {
  auto p = policy(true);
  p.top_k.value = 2;
  auto f = frequencies({0.5, 0.3, 0.2}, p, 3, 4000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 0.5 / 0.8, 0.03);
  p = policy(true);
  p.top_p.value = 0.5;  // the first token alone reaches 0.5
  f = frequencies({0.5, 0.3, 0.2}, p, 3, 2000);
  EXPECT_EQ(f[0], 1.0);
  p.top_p.value = 0.6;
  f = frequencies({0.5, 0.3, 0.2}, p, 3, 2000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.0);
  p = policy(true);
  p.min_p.value = 0.5;  // floor 0.25: 0.2 is cut
  f = frequencies({0.5, 0.3, 0.2}, p, 3, 2000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.0);
}

TEST(Sampler, LowTemperatureIsArgmaxHighFlattens) {
  auto p = policy(true);
  p.temperature.value = 0.01;
  auto f = frequencies({0.3, 0.5, 0.2}, p, 5, 1000);
  EXPECT_EQ(f[1], 1.0);
  p.temperature.value = 100.0;
  f = frequencies({0.3, 0.5, 0.2}, p, 5, 20000);
  for (double x : f) EXPECT_NEAR(x, 1.0 / 3, 0.02);
}

TEST(Sampler, TopKKeepsTiesAtTheKthValue) {
  auto p = policy(true);
  p.top_k.value = 1;
  auto f = frequencies({0.4, 0.4, 0.2}, p, 11, 4000);  // transformers keeps every logit equal to the k-th
  EXPECT_GT(f[0], 0.4);
  EXPECT_GT(f[1], 0.4);
  EXPECT_EQ(f[2], 0.0);
}

TEST(Rng, SameSeedSameStreamDifferentSeedDifferent) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
  Rng u(9);
  for (int i = 0; i < 10000; ++i) {
    const double v = u.uniform();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
  }
}

TEST(Sampler, CountsNonFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> row{1, std::nanf(""), inf, -inf, 2};
  const auto n = glassbox::generation::count_non_finite(row);
  EXPECT_EQ(n.nan, 1);
  EXPECT_EQ(n.inf, 2);
  EXPECT_TRUE(n.any());
}

}  // namespace
