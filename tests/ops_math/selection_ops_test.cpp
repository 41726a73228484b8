// EyeLike, Compress, Unique, ReverseSequence, Det, MaxUnpool and
// MeanVarianceNormalization vs hand-derived values, with empty results,
// negative axes, NaN and the refusals.
#include <cmath>
#include <limits>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

template <class T>
std::vector<T> vals(const Tensor& t) {
  return {t.data<T>(), t.data<T>() + t.numel()};
}

TEST(EyeLike, OffsetsAndDtypes) {
  Tensor x = make_tensor<int32_t>(DataType::kInt32, {2, 3}, {});
  auto y = run_op(NodeBuilder("EyeLike", 1).i("k", -1).node, 9, {&x}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(vals<int32_t>(y), (std::vector<int32_t>{0, 0, 0, 1, 0, 0}));
  auto far = run_op(NodeBuilder("EyeLike", 1).i("k", 5).i("dtype", 1).node, 9, {&x}).value()[0];
  EXPECT_EQ(vals<float>(far), std::vector<float>(6, 0.f));
  auto half = run_op(NodeBuilder("EyeLike", 1).i("dtype", 10).node, 9, {&x}).value()[0];
  EXPECT_EQ(half.data<uint16_t>()[0], 0x3C00);  // 1.0 in float16
  EXPECT_EQ(half.data<uint16_t>()[4], 0x3C00);
  EXPECT_EQ(half.data<uint16_t>()[1], 0);
  Tensor x3 = make_tensor<float>(DataType::kFloat32, {1, 2, 2}, {});
  EXPECT_FALSE(run_op(NodeBuilder("EyeLike", 1).node, 9, {&x3}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("EyeLike", 1).i("dtype", 8).node, 9).ok());  // string
}

TEST(Compress, AxisNegativeAxisFlattenedAndEmpty) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor c0 = make_tensor<bool>(DataType::kBool, {2}, {false, true});
  auto y0 = run_op(NodeBuilder("Compress", 2).i("axis", 0).node, 11, {&x, &c0}).value()[0];
  EXPECT_EQ(y0.shape(), (Shape{1, 3}));
  expect_close(y0, {3, 4, 5});
  Tensor c1 = make_tensor<bool>(DataType::kBool, {3}, {true, false, true});
  auto y1 = run_op(NodeBuilder("Compress", 2).i("axis", -1).node, 11, {&x, &c1}).value()[0];
  EXPECT_EQ(y1.shape(), (Shape{2, 2}));
  expect_close(y1, {0, 2, 3, 5});
  Tensor cf = make_tensor<bool>(DataType::kBool, {5}, {false, false, true, false, true});  // shorter than 6
  auto yf = run_op(NodeBuilder("Compress", 2).node, 11, {&x, &cf}).value()[0];
  EXPECT_EQ(yf.shape(), (Shape{2}));
  expect_close(yf, {2, 4});
  Tensor none = make_tensor<bool>(DataType::kBool, {2}, {false, false});
  EXPECT_EQ(run_op(NodeBuilder("Compress", 2).i("axis", 0).node, 11, {&x, &none}).value()[0].shape(), (Shape{0, 3}));
  Tensor too_long = make_tensor<bool>(DataType::kBool, {3}, {true, true, true});
  EXPECT_FALSE(run_op(NodeBuilder("Compress", 2).i("axis", 0).node, 11, {&x, &too_long}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("Compress", 2).i("axis", -1).node, 9).ok());  // negative axis needs 11
}

TEST(Unique, SortedUnsortedAndNaN) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {6}, {2, 1, 1, 3, 4, 3});
  auto s = run_op(NodeBuilder("Unique", 1, 4).node, 11, {&x}).value();
  expect_close(s[0], {1, 2, 3, 4});
  EXPECT_EQ(vals<int64_t>(s[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(vals<int64_t>(s[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(vals<int64_t>(s[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = run_op(NodeBuilder("Unique", 1, 4).i("sorted", 0).node, 11, {&x}).value();
  expect_close(u[0], {2, 1, 3, 4});
  EXPECT_EQ(vals<int64_t>(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(vals<int64_t>(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(vals<int64_t>(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor xn = make_tensor<float>(DataType::kFloat32, {3}, {nan, 1, nan});
  auto n = run_op(NodeBuilder("Unique", 1, 4).node, 11, {&xn}).value();
  expect_close(n[0], {1, nan});
  EXPECT_EQ(vals<int64_t>(n[2]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(vals<int64_t>(n[3]), (std::vector<int64_t>{1, 2}));
  Tensor e = make_tensor<int64_t>(DataType::kInt64, {0}, {});
  EXPECT_EQ(run_op(NodeBuilder("Unique", 1, 4).node, 11, {&e}).value()[0].numel(), 0);
}

TEST(Unique, SlicesAlongNegativeAxis) {
  // columns (1, 2), (0, 5), (1, 2)
  Tensor x = make_tensor<int32_t>(DataType::kInt32, {2, 3}, {1, 0, 1, 2, 5, 2});
  auto s = run_op(NodeBuilder("Unique", 1, 4).i("axis", -1).node, 11, {&x}).value();
  EXPECT_EQ(s[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(vals<int32_t>(s[0]), (std::vector<int32_t>{0, 1, 5, 2}));
  EXPECT_EQ(vals<int64_t>(s[1]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(vals<int64_t>(s[2]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(vals<int64_t>(s[3]), (std::vector<int64_t>{1, 2}));
}

TEST(ReverseSequence, TimeMajorWithLengths) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor lens = make_tensor<int64_t>(DataType::kInt64, {2}, {3, 1});
  auto y = run_op(NodeBuilder("ReverseSequence", 2).node, 10, {&x, &lens}).value()[0];
  expect_close(y, {4, 1, 2, 3, 0, 5});
  // batch-major: rows are sequences
  Tensor lens2 = make_tensor<int64_t>(DataType::kInt64, {3}, {2, 0, 1});
  auto yb = run_op(NodeBuilder("ReverseSequence", 2).i("batch_axis", 0).i("time_axis", 1).node, 10, {&x, &lens2})
                .value()[0];
  expect_close(yb, {1, 0, 2, 3, 4, 5});
  Tensor bad = make_tensor<int64_t>(DataType::kInt64, {2}, {4, 1});
  EXPECT_FALSE(run_op(NodeBuilder("ReverseSequence", 2).node, 10, {&x, &bad}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("ReverseSequence", 2).i("batch_axis", 2).node, 10).ok());
}

TEST(Det, PivotingSingularAndBatch) {
  Tensor a = make_tensor<float>(DataType::kFloat32, {2, 2}, {1, 2, 3, 4});
  expect_close(run_op(NodeBuilder("Det", 1).node, 11, {&a}).value()[0], {-2});
  // needs a row swap (zero leading pivot)
  Tensor b = make_tensor<double>(DataType::kFloat64, {3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8});
  auto yb = run_op(NodeBuilder("Det", 1).node, 11, {&b}).value()[0];
  EXPECT_EQ(yb.shape(), Shape{});
  EXPECT_NEAR(yb.data<double>()[0], -2.0, 1e-12);
  Tensor s = make_tensor<float>(DataType::kFloat32, {2, 2, 2}, {1, 2, 2, 4, 0, 0, 0, 0});
  expect_close(run_op(NodeBuilder("Det", 1).node, 11, {&s}).value()[0], {0, 0});
  Tensor one = make_tensor<float>(DataType::kFloat32, {3, 1, 1}, {2, -3, 0.5f});
  expect_close(run_op(NodeBuilder("Det", 1).node, 11, {&one}).value()[0], {2, -3, 0.5f});
  Tensor rect = make_tensor<float>(DataType::kFloat32, {2, 3}, {});
  EXPECT_FALSE(run_op(NodeBuilder("Det", 1).node, 11, {&rect}).ok());
}

TEST(MaxUnpool, InferredAndExplicitOutputShape) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 1, 2, 2}, {5, 6, 7, 8});
  Tensor i = make_tensor<int64_t>(DataType::kInt64, {1, 1, 2, 2}, {5, 7, 13, 15});
  auto node = NodeBuilder("MaxUnpool", 2).ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).node;
  auto y = run_op(node, 11, {&x, &i}).value()[0];
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  std::vector<float> want(16, 0.f);
  want[5] = 5, want[7] = 6, want[13] = 7, want[15] = 8;
  expect_close(y, want);
  // output_shape: indices are flat positions in that shape (as onnxruntime, see make_excluded.py)
  Tensor os = make_tensor<int64_t>(DataType::kInt64, {4}, {1, 1, 5, 5});
  auto node3 = NodeBuilder("MaxUnpool", 3).ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).node;
  auto y5 = run_op(node3, 11, {&x, &i, &os}).value()[0];
  ASSERT_EQ(y5.shape(), (Shape{1, 1, 5, 5}));
  std::vector<float> want5(25, 0.f);
  want5[5] = 5, want5[7] = 6, want5[13] = 7, want5[15] = 8;
  expect_close(y5, want5);
  Tensor bad = make_tensor<int64_t>(DataType::kInt64, {1, 1, 2, 2}, {5, 7, 13, 16});
  EXPECT_FALSE(run_op(node, 11, {&x, &bad}).ok());
}

TEST(MeanVarianceNormalization, DefaultAndNegativeAxes) {
  // [N=1, C=2, H=1, W=2]: channel 0 = [1, 3] -> [-1, 1]; channel 1 = [5, 5] -> 0 / (0 + 1e-9) = 0
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 2, 1, 2}, {1, 3, 5, 5});
  expect_close(run_op(NodeBuilder("MeanVarianceNormalization", 1).node, 13, {&x}).value()[0], {-1, 1, 0, 0});
  Tensor r = make_tensor<double>(DataType::kFloat64, {2, 3}, {0, 3, 6, 1, 1, 4});
  auto y = run_op(NodeBuilder("MeanVarianceNormalization", 1).ints("axes", {-1}).node, 13, {&r}).value()[0];
  const double s0 = std::sqrt(6.0), s1 = std::sqrt(2.0);  // row stds: var 6 and 2
  const std::vector<double> want{-3 / s0, 0, 3 / s0, -1 / s1, -1 / s1, 2 / s1};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(y.data<double>()[k], want[k], 1e-8);
  Tensor x2 = make_tensor<float>(DataType::kFloat32, {2, 2}, {});
  EXPECT_FALSE(run_op(NodeBuilder("MeanVarianceNormalization", 1).node, 13, {&x2}).ok());  // axes 2, 3 out of range
}

}  // namespace
}  // namespace glassbox::ops::testing
