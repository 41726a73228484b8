// Cast float -> bfloat16 rounding, float16 Max/Min/Mean/Mod, BatchNormalization
// training mode: hand-derived values.
#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

Tensor f32_bits(const std::vector<uint32_t>& bits) {
  Tensor t = Tensor::allocate(DataType::kFloat32, {static_cast<int64_t>(bits.size())}).value();
  std::memcpy(t.mutable_raw(), bits.data(), bits.size() * 4);
  return t;
}

Tensor halves(const Shape& shape, const std::vector<float>& v) {
  Tensor t = Tensor::allocate(DataType::kFloat16, shape).value();
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<kernels::Float16>()[i] = kernels::float_to_half(v[i]);
  return t;
}

std::vector<float> from_halves(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(kernels::half_to_float(t.data<kernels::Float16>()[i]));
  return v;
}

TEST(Cast, FloatToBFloat16RoundsToNearestEven) {
  // ties go to the even bfloat16; above a tie rounds up; max float overflows to inf; NaN stays NaN
  Tensor x = f32_bits({0x3F808000u, 0x3F818000u, 0x3F808001u, 0xBF818000u, 0x7F7FFFFFu, 0x7FC00001u, 0x3F80FFFFu});
  auto y = run_op(NodeBuilder("Cast", 1).i("to", 16).node, 13, {&x}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kBFloat16);
  const std::vector<uint16_t> want{0x3F80, 0x3F82, 0x3F81, 0xBF82, 0x7F80};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.data<uint16_t>()[i], want[i]) << "element " << i;
  EXPECT_EQ(y.data<uint16_t>()[5] & 0x7F80, 0x7F80);  // NaN: exponent all ones,
  EXPECT_NE(y.data<uint16_t>()[5] & 0x007F, 0);       // mantissa non-zero
  EXPECT_EQ(y.data<uint16_t>()[6], 0x3F81);
}

TEST(Variadic, Float16MaxMinMeanWithBroadcast) {
  Tensor a = halves({2, 2}, {1, -2, 0.5f, 7});
  Tensor b = halves({2}, {0.25f, 3});
  EXPECT_EQ(from_halves(run_op(NodeBuilder("Max", 2).node, 13, {&a, &b}).value()[0]),
            (std::vector<float>{1, 3, 0.5f, 7}));
  EXPECT_EQ(from_halves(run_op(NodeBuilder("Min", 2).node, 13, {&a, &b}).value()[0]),
            (std::vector<float>{0.25f, -2, 0.25f, 3}));
  Tensor nan = halves({1}, {NAN});
  auto m = from_halves(run_op(NodeBuilder("Max", 2).node, 13, {&a, &nan}).value()[0]);
  for (float v : m) EXPECT_TRUE(std::isnan(v));  // NaN wins, as for float32
  Tensor c = halves({2}, {2, 0});
  // (a + b + c) / 3 = 3.25/3, 1/3, 2.75/3, 10/3, each rounded to float16 (11-bit significand)
  const auto mean = from_halves(run_op(NodeBuilder("Mean", 3).node, 13, {&a, &b, &c}).value()[0]);
  const std::vector<float> want{3.25f / 3, 1.f / 3, 2.75f / 3, 10.f / 3};
  ASSERT_EQ(mean.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(mean[i], want[i], want[i] * 1e-3f) << i;
}

TEST(Mod, Float16FmodTakesTheDividendSign) {
  Tensor a = halves({4}, {5.5f, -5.5f, 7, -0.75f});
  Tensor b = halves({4}, {2, 2, -3, 0.5f});
  EXPECT_EQ(from_halves(run_op(NodeBuilder("Mod", 2).i("fmod", 1).node, 13, {&a, &b}).value()[0]),
            (std::vector<float>{1.5f, -1.5f, 1, -0.25f}));
  EXPECT_FALSE(run_op(NodeBuilder("Mod", 2).node, 13, {&a, &b}).ok());  // fmod=0 is integers only
}

TEST(BatchNormalization, TrainingModeUsesBatchStatistics) {
  // N=2, C=1, spatial 2: x = 1, 2 | 3, 6 -> mean 3, population variance 3.5
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 1, 2}, {1, 2, 3, 6});
  Tensor s = make_tensor<float>(DataType::kFloat32, {1}, {2});
  Tensor b = make_tensor<float>(DataType::kFloat32, {1}, {0.5f});
  Tensor mean = make_tensor<float>(DataType::kFloat32, {1}, {10});
  Tensor var = make_tensor<float>(DataType::kFloat32, {1}, {1});
  auto node = NodeBuilder("BatchNormalization", 5, 3).i("training_mode", 1).f("epsilon", 0.f).node;
  auto out = run_op(node, 15, {&x, &s, &b, &mean, &var}).value();
  const float sd = std::sqrt(3.5f);
  expect_close(out[0], {2 * -2 / sd + 0.5f, 2 * -1 / sd + 0.5f, 0.5f, 2 * 3 / sd + 0.5f});
  expect_close(out[1], {10 * 0.9f + 3 * 0.1f});  // running mean, default momentum 0.9
  expect_close(out[2], {1 * 0.9f + 3.5f * 0.1f});
  auto m5 = NodeBuilder("BatchNormalization", 5, 3).i("training_mode", 1).f("momentum", 0.5f).node;
  expect_close(run_op(m5, 15, {&x, &s, &b, &mean, &var}).value()[1], {6.5f});
  EXPECT_FALSE(create_op(NodeBuilder("BatchNormalization", 5).i("training_mode", 1).node, 13).ok());
}

}  // namespace
}  // namespace glassbox::ops::testing
