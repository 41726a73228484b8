// Choosing the next token from a logits row: repetition penalty, then greedy argmax or sampling
// with temperature, top-k, top-p, min-p (transformers' warper order) and a seeded generator whose
// stream depends on the seed only (not on threads, platform or the standard library).
#pragma once

#include <cstdint>
#include <span>

#include "glassbox/generation.h"

namespace glassbox::generation {

// xoshiro256** seeded through splitmix64: the same seed gives the same draws everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next();
  double uniform();  // [0, 1), 53 random bits
 private:
  uint64_t s_[4];
};

// Processes `logits` in place (penalty, temperature) and returns the chosen id. `context` holds the
// ids the penalty applies to (prompt and generated so far). Greedy ties go to the lowest id.
uint32_t choose_token(std::span<float> logits, std::span<const uint32_t> context, const GenerationPolicy& policy, Rng& rng);

// NaN and Inf counts of a row (the step is refused when either is non-zero).
struct NonFinite {
  int64_t nan = 0, inf = 0;
  bool any() const { return nan || inf; }
};
NonFinite count_non_finite(std::span<const float> logits);

}  // namespace glassbox::generation
