// Seeded random test data shared by the kernel tests (same seed, same values on every run).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace glassbox::testing {

// n floats uniform in [lo, hi) from std::mt19937(seed).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace glassbox::testing
