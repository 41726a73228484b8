// 0-sized dims on the path of a decoder's first step, which feeds a zero-length past
// [batch, kv_heads, 0, head_dim] (Optimum's layout, docs/generation.md): Concat with an empty
// input, MatMul with K = 0 (a sum over nothing: zeros) and N = 0, Softmax and the mask ops over
// empty rows, Shape/Gather/Range/Expand/Slice producing or consuming a 0.
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }
Tensor empty_f32(const Shape& s) { return Tensor::allocate(DataType::kFloat32, s).value(); }

TEST(ZeroLength, ConcatWithAnEmptyPast) {
  Tensor past = empty_f32({2, 3, 0, 4});
  Tensor now = random_f32({2, 3, 5, 4}, 1);
  auto out = run_op(NodeBuilder("Concat", 2).i("axis", 2).node, 13, {&past, &now}, 2);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(out.value()[0].shape(), (Shape{2, 3, 5, 4}));
  EXPECT_EQ(values(out.value()[0]), values(now));
  Tensor both = empty_f32({2, 3, 0, 4});
  auto empty = run_op(NodeBuilder("Concat", 2).i("axis", -2).node, 13, {&past, &both});
  ASSERT_TRUE(empty.ok()) << empty.error().to_string();
  EXPECT_EQ(empty.value()[0].shape(), (Shape{2, 3, 0, 4}));
}

TEST(ZeroLength, MatMulWithEmptyInnerOrOuterDims) {
  // K = 0: every output element is an empty sum, 0.
  Tensor a = empty_f32({2, 3, 0}), b = empty_f32({2, 0, 4});
  auto k0 = run_op(NodeBuilder("MatMul", 2).node, 13, {&a, &b}, 2);
  ASSERT_TRUE(k0.ok()) << k0.error().to_string();
  EXPECT_EQ(k0.value()[0].shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(values(k0.value()[0]), std::vector<float>(24, 0.0f));
  // N = 0 (scores against an empty past) and M = 0.
  Tensor q = random_f32({2, 3, 5}, 2), kt = empty_f32({2, 5, 0});
  auto n0 = run_op(NodeBuilder("MatMul", 2).node, 13, {&q, &kt}, 2);
  ASSERT_TRUE(n0.ok()) << n0.error().to_string();
  EXPECT_EQ(n0.value()[0].shape(), (Shape{2, 3, 0}));
  Tensor m = empty_f32({0, 5}), w = random_f32({5, 7}, 3);
  auto m0 = run_op(NodeBuilder("MatMul", 2).node, 13, {&m, &w}, 2);
  ASSERT_TRUE(m0.ok()) << m0.error().to_string();
  EXPECT_EQ(m0.value()[0].shape(), (Shape{0, 7}));
}

TEST(ZeroLength, SoftmaxOverEmptyRowsAndEmptyBatches) {
  Tensor rows = empty_f32({2, 0, 5});
  auto a = run_op(NodeBuilder("Softmax", 1).i("axis", -1).node, 13, {&rows});
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a.value()[0].shape(), (Shape{2, 0, 5}));
  Tensor cols = empty_f32({2, 3, 0});
  auto b = run_op(NodeBuilder("Softmax", 1).i("axis", -1).node, 13, {&cols});
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  EXPECT_EQ(b.value()[0].shape(), (Shape{2, 3, 0}));
}

TEST(ZeroLength, ShapeGatherRangeExpandSlice) {
  Tensor past = empty_f32({1, 2, 0, 8});
  auto shape = run_op(NodeBuilder("Shape", 1).node, 13, {&past});
  ASSERT_TRUE(shape.ok());
  Tensor two = make_tensor<int64_t>(DataType::kInt64, {}, {2});
  auto len = run_op(NodeBuilder("Gather", 2).i("axis", 0).node, 13, {&shape.value()[0], &two});
  ASSERT_TRUE(len.ok()) << len.error().to_string();
  EXPECT_EQ(len.value()[0].data<int64_t>()[0], 0);
  Tensor zero = len.value()[0], one = make_tensor<int64_t>(DataType::kInt64, {}, {1});
  auto range = run_op(NodeBuilder("Range", 3).node, 11, {&zero, &zero, &one});
  ASSERT_TRUE(range.ok()) << range.error().to_string();
  EXPECT_EQ(range.value()[0].shape(), (Shape{0}));
  Tensor x = random_f32({1, 2, 1, 8}, 4);
  Tensor to = make_tensor<int64_t>(DataType::kInt64, {4}, {1, 2, 0, 8});
  auto expand = run_op(NodeBuilder("Expand", 2).node, 13, {&x, &to});
  ASSERT_TRUE(expand.ok()) << expand.error().to_string();
  EXPECT_EQ(expand.value()[0].shape(), (Shape{1, 2, 0, 8}));
  // mask[:, past_len:] with past_len 0 keeps everything; CumSum over a 0-length axis is empty.
  Tensor mask = make_tensor<int64_t>(DataType::kInt64, {1, 3}, {1, 1, 1});
  Tensor starts = make_tensor<int64_t>(DataType::kInt64, {1}, {0}), ends = make_tensor<int64_t>(DataType::kInt64, {1}, {INT64_MAX});
  Tensor axes = make_tensor<int64_t>(DataType::kInt64, {1}, {1});
  auto slice = run_op(NodeBuilder("Slice", 4).node, 13, {&mask, &starts, &ends, &axes});
  ASSERT_TRUE(slice.ok()) << slice.error().to_string();
  EXPECT_EQ(slice.value()[0].shape(), (Shape{1, 3}));
  Tensor none = Tensor::allocate(DataType::kInt64, {1, 0}).value();
  auto cum = run_op(NodeBuilder("CumSum", 2).node, 14, {&none, &one});
  ASSERT_TRUE(cum.ok()) << cum.error().to_string();
  EXPECT_EQ(cum.value()[0].shape(), (Shape{1, 0}));
}

TEST(ZeroLength, ElementwiseAndWhereOnEmptyTensors) {
  Tensor a = empty_f32({2, 0, 3}), b = random_f32({1, 1, 3}, 5);
  auto add = run_op(NodeBuilder("Add", 2).node, 14, {&a, &b});
  ASSERT_TRUE(add.ok()) << add.error().to_string();
  EXPECT_EQ(add.value()[0].shape(), (Shape{2, 0, 3}));
  Tensor cond = Tensor::allocate(DataType::kBool, {2, 0, 3}).value();
  auto where = run_op(NodeBuilder("Where", 3).node, 16, {&cond, &a, &b});
  ASSERT_TRUE(where.ok()) << where.error().to_string();
  EXPECT_EQ(where.value()[0].shape(), (Shape{2, 0, 3}));
  auto mean = run_op(NodeBuilder("ReduceMean", 1).ints("axes", {-1}).node, 13, {&a});
  ASSERT_TRUE(mean.ok()) << mean.error().to_string();
  EXPECT_EQ(mean.value()[0].shape(), (Shape{2, 0, 1}));
}

}  // namespace
}  // namespace glassbox::ops::testing
