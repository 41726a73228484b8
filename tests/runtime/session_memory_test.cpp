// SessionOptions::max_memory (docs/memory.md, "The C++ API"): a session loaded with a budget refuses at load
// when what is reserved + its weights (+ the run tensors of its declared largest shape) do not fit, and refuses
// a run whose tensors would cross what the budget leaves, before the allocation, naming the numbers.
#include <gtest/gtest.h>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

// y = Relu(x + w): x [batch, 3] float, w a [1, 3] initializer (12 bytes of weights).
std::string add_relu_model(const TempDir& dir) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, 3}, {"batch", ""});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, 3}, {"batch", ""});
  add_initializer<float>(g, "w", onnx::TensorProto::FLOAT, {1, 3}, {1.f, 2.f, 3.f});
  add_node(g, "Add", {"x", "w"}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {"y"}, "relu");
  return write_model(m, dir.file("add_relu.onnx"));
}

std::vector<NamedTensor> rows(int64_t n) { return {{"x", float_tensor({n, 3}, std::vector<float>(n * 3, 1.f))}}; }

TEST(SessionMemory, WithoutABudgetNothingIsCheckedButTheWeightsAreCounted) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  auto s = Session::load(add_relu_model(dir));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  const MemoryReport r = s->memory_report();
  EXPECT_EQ(r.budget, 0);
  EXPECT_EQ(r.weights, 12);
  EXPECT_EQ(r.run_limit, 0);
  EXPECT_EQ(s->options().memory_limit_bytes, SessionOptions{}.memory_limit_bytes);
  EXPECT_TRUE(s->run(rows(1000)).ok());
}

TEST(SessionMemory, ReservedAndWeightsOverTheBudgetAreRefusedAtLoad) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  SessionOptions o;
  o.max_memory = 1000;
  o.max_memory_reserved = 990;  // + 12 bytes of weights: over by 2
  auto s = Session::load(add_relu_model(dir), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(s.error().what.find("(990 bytes)"), std::string::npos) << s.error().what;
  EXPECT_NE(s.error().what.find("weights (12)"), std::string::npos) << s.error().what;
  EXPECT_NE(s.error().what.find("over the budget of 1000 bytes"), std::string::npos) << s.error().what;
  o.max_memory_reserved = 900;  // fits: runs get the 88 bytes left
  s = Session::load(add_relu_model(dir), o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s->memory_report().run_limit, 88);
  EXPECT_EQ(s->options().memory_limit_bytes, 88);
}

TEST(SessionMemory, ADeclaredLargestShapeThatDoesNotFitIsRefusedAtLoad) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  SessionOptions o;
  o.max_memory = 1 << 20;
  // 100000 x 3 floats = 1.2 MB per tensor: the dry run's first allocation crosses what the budget leaves.
  o.max_input_shapes = {{"x", {100000, 3}}};
  auto s = Session::load(add_relu_model(dir), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(s.error().what.find("over the budget of 1048576 bytes"), std::string::npos) << s.error().to_string();
  EXPECT_NE(s.error().to_string().find("x[100000,3]"), std::string::npos) << s.error().to_string();
  // A shape that fits loads, and the report carries its figures.
  o.max_input_shapes = {{"x", {1000, 3}}};
  s = Session::load(add_relu_model(dir), o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  const MemoryReport r = s->memory_report();
  EXPECT_EQ(r.shape, "x[1000,3]");
  EXPECT_GE(r.first_run, 12000);  // the Add's output at least (12000 bytes)
  EXPECT_GT(r.arena, 0);
  EXPECT_EQ(r.total(), r.weights + r.first_run + r.arena);
  EXPECT_LE(r.total(), o.max_memory);
}

TEST(SessionMemory, ARunOverWhatTheBudgetLeavesIsRefusedBeforeItsAllocation) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  SessionOptions o;
  o.max_memory = 64 << 20;
  auto s = Session::load(add_relu_model(dir), o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_TRUE(s->run(rows(1000)).ok());
  auto big = s->run(rows(int64_t{6} << 20));  // 72 MiB per tensor: the Add's output alone crosses 64 MiB
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(big.error().what.find("under the memory budget of 67108864 bytes"), std::string::npos) << big.error().what;
  EXPECT_NE(big.error().what.find("75497472 bytes"), std::string::npos) << big.error().what;  // the tensor refused
  // check_memory with a caller's reserved figure: the same rule, naming it.
  auto checked = s->check_memory(rows(1000), (64 << 20) - 1000);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().what.find("reserved 67107864"), std::string::npos) << checked.error().what;
}

TEST(SessionMemory, WhatIsReservedAfterLoadTightensTheRunLimitAndNeverLoosensIt) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  SessionOptions o;
  o.max_memory = 1000;
  auto s = Session::load(add_relu_model(dir), o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s->memory_report().run_limit, 988);
  ASSERT_TRUE(s->run(rows(20)).ok());  // 240-byte tensors fit 988
  ASSERT_TRUE(s->set_reserved(900).ok());  // measured after load (a load's growth): runs get 88
  EXPECT_EQ(s->memory_report().run_limit, 88);
  EXPECT_EQ(s->memory_report().reserved, 900);
  EXPECT_EQ(s->options().memory_limit_bytes, 88);
  auto big = s->run(rows(20));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kLimitExceeded);
  ASSERT_TRUE(s->set_reserved(100).ok());  // less reserved later never raises the limit
  EXPECT_EQ(s->memory_report().run_limit, 88);
  auto over = s->set_reserved(990);  // + 12 bytes of weights: nothing left
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(over.error().what.find("over the budget of 1000 bytes"), std::string::npos) << over.error().what;
  SessionOptions none;  // without a budget: nothing to tighten
  auto free = Session::load(add_relu_model(dir), none);
  ASSERT_TRUE(free.ok());
  EXPECT_TRUE(free->set_reserved(int64_t{1} << 40).ok());
  EXPECT_TRUE(free->run(rows(20)).ok());
}

TEST(SessionMemory, AShapeForAnInputTheModelDoesNotHaveIsRefused) {
  REQUIRE_OPS("Add", "Relu");
  TempDir dir;
  SessionOptions o;
  o.max_memory = 64 << 20;
  o.max_input_shapes = {{"x", {2, 3}}, {"nope", {1}}};
  auto s = Session::load(add_relu_model(dir), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().what.find("'nope'"), std::string::npos) << s.error().what;
}

}  // namespace
}  // namespace glassbox::rt_test
