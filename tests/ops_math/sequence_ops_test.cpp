// Sequence and optional ops (SequenceInsert/At/Erase/Length, SplitToSequence,
// ConcatFromSequence, Optional*) on a context that holds sequence values:
// empty sequences, negative positions, out-of-range positions (clear error, no
// out-of-bounds read under ASan). Expected values are worked out from the spec.
#include <gtest/gtest.h>

#include "ops/op.h"
#include "test_context.h"

namespace glassbox::ops::testing {
namespace {

// Inputs and outputs are Values.
class SeqContext final : public ComputeContext {
 public:
  SeqContext(std::vector<Value> inputs, size_t num_outputs) : in_(std::move(inputs)), out_(num_outputs), pool_(1) {}
  size_t num_inputs() const override { return in_.size(); }
  const Tensor* input(size_t i) const override {
    return i < in_.size() && in_[i].kind == Value::Kind::kTensor && in_[i].tensor.defined() ? &in_[i].tensor : nullptr;
  }
  const std::vector<Tensor>* input_sequence(size_t i) const override {
    return i < in_.size() && in_[i].kind == Value::Kind::kSequence ? &in_[i].elements : nullptr;
  }
  bool input_is_none(size_t i) const override { return i < in_.size() && in_[i].kind == Value::Kind::kNone; }
  size_t num_outputs() const override { return out_.size(); }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
    out_.at(i) = Value::of(std::move(t));
    return &out_[i].tensor;
  }
  Status alias_output(size_t i, const Tensor& view) override {
    out_.at(i) = Value::of(view);
    return {};
  }
  Status set_output_sequence(size_t i, std::vector<Tensor> e) override {
    out_.at(i) = Value::sequence(std::move(e));
    return {};
  }
  Status set_output_none(size_t i) override {
    out_.at(i) = Value::none();
    return {};
  }
  Result<Tensor> allocate_scratch(DataType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
  ThreadPool& pool() override { return pool_; }
  const std::string& node_name() const override { return name_; }
  std::vector<Value> in_, out_;

 private:
  ThreadPool pool_;
  std::string name_ = "seq_test";
};

Result<Value> run(const graph::Node& node, std::vector<Value> inputs, int64_t opset = 17) {
  GB_ASSIGN_OR_RETURN(auto op, create_op(node, opset));
  SeqContext ctx(std::move(inputs), node.outputs.size());
  GB_RETURN_IF_ERROR(op->compute(ctx));
  return ctx.out_[0];
}

Tensor f32(const Shape& s, std::vector<float> v) { return make_tensor<float>(DataType::kFloat32, s, v); }
Tensor i64(int64_t v) { return make_tensor<int64_t>(DataType::kInt64, {}, {v}); }
Value seq3() { return Value::sequence({f32({1}, {1}), f32({2}, {2, 3}), f32({1}, {4})}); }

TEST(SequenceOps, InsertAtNegativePositionAndEnd) {
  auto r = run(NodeBuilder("SequenceInsert", 3).node, {seq3(), Value::of(f32({1}, {9})), Value::of(i64(-1))});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->elements.size(), 4u);
  EXPECT_EQ(r->elements[2].data<float>()[0], 9.f);  // before the last element
  auto end = run(NodeBuilder("SequenceInsert", 2).node, {Value::sequence({}), Value::of(f32({1}, {5}))});
  ASSERT_TRUE(end.ok());
  ASSERT_EQ(end->elements.size(), 1u);
  auto bad = run(NodeBuilder("SequenceInsert", 3).node, {seq3(), Value::of(f32({1}, {9})), Value::of(i64(4))});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().what.find("out of range"), std::string::npos);
  auto dtype = run(NodeBuilder("SequenceInsert", 2).node, {seq3(), Value::of(i64(1))});
  EXPECT_FALSE(dtype.ok());
}

TEST(SequenceOps, AtEraseLength) {
  auto at = run(NodeBuilder("SequenceAt", 2).node, {seq3(), Value::of(i64(-2))});
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->tensor.shape(), (Shape{2}));
  EXPECT_EQ(at->tensor.data<float>()[1], 3.f);
  EXPECT_FALSE(run(NodeBuilder("SequenceAt", 2).node, {seq3(), Value::of(i64(3))}).ok());
  EXPECT_FALSE(run(NodeBuilder("SequenceAt", 2).node, {seq3(), Value::of(i64(-4))}).ok());
  EXPECT_FALSE(run(NodeBuilder("SequenceAt", 2).node, {Value::sequence({}), Value::of(i64(0))}).ok());
  auto er = run(NodeBuilder("SequenceErase", 1).node, {seq3()});  // default: the last
  ASSERT_TRUE(er.ok());
  ASSERT_EQ(er->elements.size(), 2u);
  EXPECT_EQ(er->elements[1].data<float>()[0], 2.f);
  EXPECT_FALSE(run(NodeBuilder("SequenceErase", 1).node, {Value::sequence({})}).ok());
  auto len = run(NodeBuilder("SequenceLength", 1).node, {Value::sequence({})});
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(len->tensor.data<int64_t>()[0], 0);
  EXPECT_FALSE(run(NodeBuilder("SequenceLength", 1).node, {Value::of(i64(1))}).ok());  // a tensor, not a sequence
}

TEST(SequenceOps, SplitToSequenceAndConcatBack) {
  const Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  // Scalar split 2 along axis 1: pieces of 2 and 1.
  auto s = run(NodeBuilder("SplitToSequence", 2).i("axis", 1).node, {Value::of(x), Value::of(i64(2))});
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  ASSERT_EQ(s->elements.size(), 2u);
  EXPECT_EQ(s->elements[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(s->elements[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(s->elements[1].data<float>()[1], 5.f);
  auto c = run(NodeBuilder("ConcatFromSequence", 1).i("axis", -1).node, {*s});
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->tensor.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c->tensor.data<float>()[i], static_cast<float>(i));
  // No split, keepdims 0: rows without the axis; stacking them back with new_axis.
  auto rows = run(NodeBuilder("SplitToSequence", 1).i("keepdims", 0).node, {Value::of(x)});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->elements.size(), 2u);
  EXPECT_EQ(rows->elements[1].shape(), (Shape{3}));
  auto st = run(NodeBuilder("ConcatFromSequence", 1).i("axis", 1).i("new_axis", 1).node, {*rows});
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->tensor.shape(), (Shape{3, 2}));
  EXPECT_EQ(st->tensor.data<float>()[1], 3.f);  // [0][1] = row 1 element 0
  EXPECT_FALSE(run(NodeBuilder("SplitToSequence", 2).node, {Value::of(x), Value::of(i64(0))}).ok());
  EXPECT_FALSE(run(NodeBuilder("ConcatFromSequence", 1).i("axis", 0).node, {Value::sequence({})}).ok());
  // Mismatched non-axis dims are refused, not read out of bounds.
  EXPECT_FALSE(run(NodeBuilder("ConcatFromSequence", 1).i("axis", 0).node,
                   {Value::sequence({f32({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3})})}).ok());
}

TEST(SequenceOps, Optionals) {
  auto has = run(NodeBuilder("OptionalHasElement", 1).node, {Value::none()});
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(has->tensor.data<bool>()[0]);
  has = run(NodeBuilder("OptionalHasElement", 1).node, {seq3()});
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(has->tensor.data<bool>()[0]);
  auto get = run(NodeBuilder("OptionalGetElement", 1).node, {Value::none()});
  ASSERT_FALSE(get.ok());
  EXPECT_NE(get.error().what.find("empty"), std::string::npos);
  get = run(NodeBuilder("OptionalGetElement", 1).node, {seq3()});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->elements.size(), 3u);
  auto opt = run(NodeBuilder("Optional", 1).node, {Value::of(i64(7))});
  ASSERT_TRUE(opt.ok());
  EXPECT_EQ(opt->tensor.data<int64_t>()[0], 7);
}

}  // namespace
}  // namespace glassbox::ops::testing
