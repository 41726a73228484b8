// MatMul on non-float32 dtypes, MatMulInteger, Einsum with ellipsis / float64, Shrink.
#include <algorithm>
#include <cmath>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

TEST(MatMul, Int64AndDouble) {
  Tensor a = make_tensor<int64_t>(DataType::kInt64, {2, 2}, {1, 2, 3, 4});
  Tensor b = make_tensor<int64_t>(DataType::kInt64, {2, 1}, {5, 6});
  auto y = run_op(NodeBuilder("MatMul", 2).node, 13, {&a, &b}).value()[0];
  EXPECT_EQ(y.data<int64_t>()[0], 17);
  EXPECT_EQ(y.data<int64_t>()[1], 39);
  Tensor c = make_tensor<double>(DataType::kFloat64, {1, 2}, {0.5, 0.25});
  Tensor d = make_tensor<double>(DataType::kFloat64, {2, 1}, {2, 4});
  EXPECT_DOUBLE_EQ(run_op(NodeBuilder("MatMul", 2).node, 13, {&c, &d}).value()[0].data<double>()[0], 2.0);
}

TEST(MatMulInteger, ZeroPoints) {
  Tensor a = make_tensor<uint8_t>(DataType::kUInt8, {2, 3}, {11, 7, 3, 10, 6, 2});
  Tensor b = make_tensor<uint8_t>(DataType::kUInt8, {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor za = make_tensor<uint8_t>(DataType::kUInt8, {}, {12});
  Tensor zb = make_tensor<uint8_t>(DataType::kUInt8, {2}, {0, 1});
  auto y = run_op(NodeBuilder("MatMulInteger", 4).node, 13, {&a, &b, &za, &zb}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  const int32_t A[2][3] = {{-1, -5, -9}, {-2, -6, -10}}, B[3][2] = {{1, 3}, {2, 4}, {3, 5}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      int32_t s = 0;
      for (int k = 0; k < 3; ++k) s += A[i][k] * B[k][j];
      EXPECT_EQ(y.data<int32_t>()[i * 2 + j], s);
    }
}

TEST(Einsum, EllipsisAndDouble) {
  Tensor a = random_f32({2, 3, 4, 5}, 1), b = random_f32({2, 3, 5, 6}, 2);
  auto y = run_op(NodeBuilder("Einsum", 2).s("equation", "...ij,...jk->...ik").node, 13, {&a, &b}).value()[0];
  auto z = run_op(NodeBuilder("MatMul", 2).node, 13, {&a, &b}).value()[0];
  ASSERT_EQ(y.shape(), z.shape());
  expect_close(y, std::vector<float>(z.data<float>(), z.data<float>() + z.numel()), 1e-5f, 1e-5f);
  Tensor x = make_tensor<double>(DataType::kFloat64, {2, 2}, {1, 2, 3, 4});
  auto t = run_op(NodeBuilder("Einsum", 1).s("equation", "ij->ji").node, 13, {&x}).value()[0];
  EXPECT_EQ(t.data<double>()[1], 3.0);
  auto s = run_op(NodeBuilder("Einsum", 1).s("equation", "ij->").node, 13, {&x}).value()[0];
  EXPECT_EQ(s.data<double>()[0], 10.0);
}

TEST(Shrink, Band) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {5}, {-2, -1, 0, 1, 2});
  auto y = run_op(NodeBuilder("Shrink", 1).f("lambd", 1.5f).f("bias", 1.5f).node, 13, {&x}).value()[0];
  expect_close(y, {-0.5f, 0, 0, 0, 0.5f});
}

}  // namespace
}  // namespace glassbox::ops::testing

namespace glassbox::ops::testing {
namespace {

TEST(QLinearMatMul, MatchesFloatComputation) {
  Tensor a = make_tensor<uint8_t>(DataType::kUInt8, {2, 2}, {208, 236, 0, 238});
  Tensor b = make_tensor<uint8_t>(DataType::kUInt8, {2, 1}, {152, 51});
  Tensor sa = make_tensor<float>(DataType::kFloat32, {}, {0.0066f}), sb = make_tensor<float>(DataType::kFloat32, {}, {0.00705f});
  Tensor za = make_tensor<uint8_t>(DataType::kUInt8, {}, {113}), zb = make_tensor<uint8_t>(DataType::kUInt8, {}, {114});
  Tensor sy = make_tensor<float>(DataType::kFloat32, {}, {0.0107f});
  Tensor zy = make_tensor<uint8_t>(DataType::kUInt8, {}, {118});
  auto y = run_op(NodeBuilder("QLinearMatMul", 8).node, 13, {&a, &sa, &za, &b, &sb, &zb, &sy, &zy}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kUInt8);
  for (int i = 0; i < 2; ++i) {
    int32_t acc = 0;
    for (int k = 0; k < 2; ++k) acc += (a.data<uint8_t>()[i * 2 + k] - 113) * (b.data<uint8_t>()[k] - 114);
    const float q = std::nearbyint(acc * (0.0066f * 0.00705f / 0.0107f)) + 118;
    EXPECT_EQ(y.data<uint8_t>()[i], static_cast<uint8_t>(std::clamp(q, 0.f, 255.f)));
  }
}

}  // namespace
}  // namespace glassbox::ops::testing
