// Opset <= 6 limited broadcasting (`broadcast`/`axis` attributes) of Add/Sub/Mul/Div/Pow,
// Gemm-6's C and PRelu-6's per-channel slope, against values computed by hand.
#include <gtest/gtest.h>

#include "test_context.h"

using namespace glassbox;
using namespace glassbox::ops::testing;

namespace {

std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(LegacyBroadcast, AxisPlacesBInsideA) {
  // A [2,3,4] + B [3] with axis 1: B[j] is added along dim 1 (numpy would align B with dim 2).
  Tensor a = make_tensor<float>(DataType::kFloat32, {2, 3, 4}, iota(24));
  Tensor b = make_tensor<float>(DataType::kFloat32, {3}, {100, 200, 300});
  auto node = NodeBuilder("Add", 2).i("broadcast", 1).i("axis", 1).node;
  auto out = run_op(node, 6, {&a, &b});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_EQ((*out)[0].shape(), (Shape{2, 3, 4}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        const int64_t i = (n * 3 + j) * 4 + k;
        EXPECT_EQ((*out)[0].data<float>()[i], static_cast<float>(i) + 100.f * static_cast<float>(j + 1));
      }
}

TEST(LegacyBroadcast, SuffixWithoutAxisAndScalar) {
  Tensor a = make_tensor<float>(DataType::kFloat32, {2, 3}, iota(6));
  Tensor b = make_tensor<float>(DataType::kFloat32, {3}, {1, 2, 3});
  auto sub = run_op(NodeBuilder("Sub", 2).i("broadcast", 1).node, 6, {&a, &b});
  ASSERT_TRUE(sub.ok()) << sub.error().to_string();
  EXPECT_EQ((*sub)[0].data<float>()[5], 5.f - 3.f);
  Tensor s = make_tensor<float>(DataType::kFloat32, {}, {2});
  auto mul = run_op(NodeBuilder("Mul", 2).i("broadcast", 1).node, 6, {&a, &s});
  ASSERT_TRUE(mul.ok()) << mul.error().to_string();
  EXPECT_EQ((*mul)[0].data<float>()[4], 8.f);
  auto pw = run_op(NodeBuilder("Pow", 2).i("broadcast", 1).node, 6, {&a, &s});
  ASSERT_TRUE(pw.ok()) << pw.error().to_string();
  EXPECT_EQ((*pw)[0].data<float>()[3], 9.f);
}

TEST(LegacyBroadcast, RefusesWhatTheOldRulesRefuse) {
  Tensor a = make_tensor<float>(DataType::kFloat32, {2, 3}, iota(6));
  Tensor b = make_tensor<float>(DataType::kFloat32, {3}, {1, 2, 3});
  // broadcast = 0 (the default): shapes must be equal, even where numpy would broadcast.
  auto eq = run_op(NodeBuilder("Add", 2).node, 6, {&a, &b});
  ASSERT_FALSE(eq.ok());
  EXPECT_NE(eq.error().to_string().find("broadcast is 0"), std::string::npos) << eq.error().to_string();
  // B may not grow A (unidirectional), and axis must fit.
  auto grow = run_op(NodeBuilder("Div", 2).i("broadcast", 1).node, 6, {&b, &a});
  EXPECT_FALSE(grow.ok());
  auto bad_axis = run_op(NodeBuilder("Add", 2).i("broadcast", 1).i("axis", 2).node, 6, {&a, &b});
  ASSERT_FALSE(bad_axis.ok());
  EXPECT_NE(bad_axis.error().to_string().find("axis 2"), std::string::npos) << bad_axis.error().to_string();
  // The attributes do not exist from opset 7 on.
  EXPECT_FALSE(run_op(NodeBuilder("Add", 2).i("broadcast", 1).node, 7, {&a, &b}).ok());
}

TEST(LegacyBroadcast, PReluSixAppliesA1DSlopePerChannel) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 2, 3}, {-1, -2, -3, -1, -2, 4});
  Tensor slope = make_tensor<float>(DataType::kFloat32, {2}, {0.5f, 2.f});
  auto six = run_op(NodeBuilder("PRelu", 2).node, 6, {&x, &slope});
  ASSERT_TRUE(six.ok()) << six.error().to_string();
  const std::vector<float> want{-0.5f, -1.f, -1.5f, -2.f, -4.f, 4.f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*six)[0].data<float>()[i], want[i]) << i;
  // Opset 7+: numpy broadcasting aligns the slope with the last dim (3 != 2: refused).
  EXPECT_FALSE(run_op(NodeBuilder("PRelu", 2).node, 7, {&x, &slope}).ok());
}

TEST(LegacyBroadcast, GemmSixNeedsFullCWithoutBroadcast) {
  Tensor a = make_tensor<float>(DataType::kFloat32, {2, 2}, {1, 2, 3, 4});
  Tensor b = make_tensor<float>(DataType::kFloat32, {2, 2}, {1, 0, 0, 1});
  Tensor c = make_tensor<float>(DataType::kFloat32, {2}, {10, 20});
  auto no = run_op(NodeBuilder("Gemm", 3).node, 6, {&a, &b, &c});
  EXPECT_FALSE(no.ok());
  auto yes = run_op(NodeBuilder("Gemm", 3).i("broadcast", 1).node, 6, {&a, &b, &c});
  ASSERT_TRUE(yes.ok()) << yes.error().to_string();
  EXPECT_EQ((*yes)[0].data<float>()[3], 24.f);
}

}  // namespace
