// Random tensors with a fixed seed and naive reference helpers for op tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "glassbox/tensor.h"

namespace glassbox::ops::testing {

inline Tensor random_f32(const Shape& shape, uint32_t seed, float lo = -3.f, float hi = 3.f) {
  Tensor t = Tensor::allocate(DataType::kFloat32, shape).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = dist(rng);
  return t;
}

inline void expect_close(const Tensor& got, const std::vector<float>& want, float rtol = 1e-5f, float atol = 1e-6f) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = got.data<float>()[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "at " << i;
      continue;
    }
    ASSERT_NEAR(g, want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
  }
}

// Index of element `flat` of `out` within a broadcast input of shape `in`.
inline int64_t bcast_index(const Shape& out, const Shape& in, int64_t flat) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = flat % out[d];
    flat /= out[d];
  }
  int64_t off = 0;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : idx[lead + d]);
  return off;
}

}  // namespace glassbox::ops::testing
