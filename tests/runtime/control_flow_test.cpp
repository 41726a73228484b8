// If / Loop / Scan through a Session: bodies capture outer-scope values (also
// through two levels), zero-iteration loops, scan axes and directions, memory
// limit inside loops, and bodies with unsupported ops refused at load.
#include <gtest/gtest.h>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

onnx::GraphProto* add_graph_attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* g = a->mutable_g();
  g->set_name(name);
  return g;
}

constexpr int kF = onnx::TensorProto::FLOAT, kI64 = onnx::TensorProto::INT64, kB = onnx::TensorProto::BOOL;

Result<std::vector<NamedTensor>> run_at(const std::string& path, int opt_level, const std::vector<NamedTensor>& in,
                                        int64_t memory_limit = 0) {
  SessionOptions o;
  o.opt_level = opt_level;
  o.threads = 2;
  if (memory_limit) o.memory_limit_bytes = memory_limit;
  GB_ASSIGN_OR_RETURN(Session s, Session::load(path, o));
  GB_RETURN_IF_ERROR(s.run(in).status());
  return s.run(in);  // the second run uses the memory plan the first one recorded
}

Tensor bool_scalar(bool v) {
  Tensor t = Tensor::allocate(DataType::kBool, {}).value();
  t.mutable_data<bool>()[0] = v;
  return t;
}

// y = If(c) then x + x (float[3]) else a branch-local constant float[2].
std::string if_model(const TempDir& dir) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "c", kB, {});
  add_value(g->mutable_input(), "x", kF, {3});
  add_value(g->mutable_output(), "y", kF, {-1});
  auto* n = add_node(g, "If", {"c"}, {"y"}, "if");
  auto* t = add_graph_attr(n, "then_branch");
  add_value(t->mutable_output(), "t_out", kF, {3});
  add_node(t, "Add", {"x", "x"}, {"t_out"});  // x is captured from the main graph
  auto* e = add_graph_attr(n, "else_branch");
  add_value(e->mutable_output(), "e_out", kF, {2});
  add_initializer<float>(e, "e_const", kF, {2}, {7, 8});
  add_node(e, "Identity", {"e_const"}, {"e_out"});
  return write_model(m, dir.file("if.onnx"));
}

TEST(ControlFlow, IfRunsTheChosenBranchWithCapturedValues) {
  REQUIRE_OPS("If", "Add", "Identity");
  TempDir dir;
  const std::string path = if_model(dir);
  for (int level : {0, 2}) {
    auto yes = run_at(path, level, {{"c", bool_scalar(true)}, {"x", float_tensor({3}, {1, 2, 3})}});
    ASSERT_TRUE(yes.ok()) << yes.error().to_string();
    EXPECT_EQ(values_of<float>((*yes)[0].tensor), (std::vector<float>{2, 4, 6}));
    auto no = run_at(path, level, {{"c", bool_scalar(false)}, {"x", float_tensor({3}, {1, 2, 3})}});
    ASSERT_TRUE(no.ok()) << no.error().to_string();
    EXPECT_EQ(values_of<float>((*no)[0].tensor), (std::vector<float>{7, 8}));
  }
}

// xs = x * 2 (an intermediate only the body reads); Loop(M, cond, acc0):
//   body(i, cond, acc): acc' = If(cond) then acc + xs else acc   (xs captured two levels down)
//   outputs acc_final, scan of acc' (float[2] per iteration).
std::string loop_model(const TempDir& dir) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "M", kI64, {});
  add_value(g->mutable_input(), "x", kF, {2});
  add_value(g->mutable_output(), "acc_final", kF, {2});
  add_value(g->mutable_output(), "trace", kF, {-1, 2});
  add_initializer<float>(g, "two", kF, {}, {2});
  add_initializer<uint8_t>(g, "yes", kB, {}, {1});
  add_node(g, "Mul", {"x", "two"}, {"xs"}, "mul");
  add_node(g, "Identity", {"x"}, {"acc0"}, "init");
  auto* loop = add_node(g, "Loop", {"M", "yes", "acc0"}, {"acc_final", "trace"}, "loop");
  auto* body = add_graph_attr(loop, "body");
  add_value(body->mutable_input(), "i", kI64, {});
  add_value(body->mutable_input(), "cond_in", kB, {});
  add_value(body->mutable_input(), "acc", kF, {2});
  add_value(body->mutable_output(), "cond_out", kB, {});
  add_value(body->mutable_output(), "acc_next", kF, {2});
  add_value(body->mutable_output(), "acc_scan", kF, {2});
  add_node(body, "Identity", {"cond_in"}, {"cond_out"});
  auto* inner_if = add_node(body, "If", {"cond_in"}, {"acc_next"}, "inner_if");
  auto* t = add_graph_attr(inner_if, "then_branch");
  add_value(t->mutable_output(), "sum", kF, {2});
  add_node(t, "Add", {"acc", "xs"}, {"sum"});
  auto* e = add_graph_attr(inner_if, "else_branch");
  add_value(e->mutable_output(), "same", kF, {2});
  add_node(e, "Identity", {"acc"}, {"same"});
  add_node(body, "Identity", {"acc_next"}, {"acc_scan"});
  return write_model(m, dir.file("loop.onnx"));
}

TEST(ControlFlow, LoopCarriesValuesStacksScansAndCapturesThroughNestedIf) {
  REQUIRE_OPS("Loop", "If", "Add", "Mul", "Identity");
  TempDir dir;
  const std::string path = loop_model(dir);
  for (int level : {0, 1, 2}) {
    auto out = run_at(path, level, {{"M", make_tensor<int64_t>(DataType::kInt64, {}, {3})}, {"x", float_tensor({2}, {1, 10})}});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_EQ(values_of<float>((*out)[0].tensor), (std::vector<float>{7, 70}));  // 1 + 3 * 2
    EXPECT_EQ((*out)[1].tensor.shape(), (Shape{3, 2}));
    EXPECT_EQ(values_of<float>((*out)[1].tensor), (std::vector<float>{3, 30, 5, 50, 7, 70}));
  }
  // Zero iterations: the initial value, and an empty scan output with the body's declared dims.
  auto none = run_at(path, 2, {{"M", make_tensor<int64_t>(DataType::kInt64, {}, {0})}, {"x", float_tensor({2}, {1, 10})}});
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_EQ(values_of<float>((*none)[0].tensor), (std::vector<float>{1, 10}));
  EXPECT_EQ((*none)[1].tensor.shape(), (Shape{0, 2}));
}

TEST(ControlFlow, LoopScanOutputsCountAgainstTheMemoryLimit) {
  REQUIRE_OPS("Loop", "Mul", "Identity", "Add", "If");
  TempDir dir;
  const std::string path = loop_model(dir);
  // 10^9 iterations, each keeping an 8-byte scan slice: stopped by a 64 KiB limit after
  // ~8000 iterations instead of growing without bound.
  auto out = run_at(path, 2,
                    {{"M", make_tensor<int64_t>(DataType::kInt64, {}, {1000000000})},
                     {"x", float_tensor({2}, {1, 1})}},
                    int64_t{1} << 16);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kLimitExceeded) << out.error().to_string();
}

// Scan-9 over axis 1 of x [2, 3], reversed: state s (float[2]) accumulates the
// columns from the last; the scan output is stored reversed too, on axis 0.
std::string scan_model(const TempDir& dir) {
  auto m = make_model(11);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "s0", kF, {2});
  add_value(g->mutable_input(), "x", kF, {2, 3});
  add_value(g->mutable_output(), "s", kF, {2});
  add_value(g->mutable_output(), "partial", kF, {3, 2});
  auto* n = add_node(g, "Scan", {"s0", "x"}, {"s", "partial"}, "scan");
  add_int_attr(n, "num_scan_inputs", 1);
  add_ints_attr(n, "scan_input_axes", {1});
  add_ints_attr(n, "scan_input_directions", {1});
  add_ints_attr(n, "scan_output_directions", {1});
  auto* body = add_graph_attr(n, "body");
  add_value(body->mutable_input(), "acc", kF, {2});
  add_value(body->mutable_input(), "col", kF, {2});
  add_value(body->mutable_output(), "acc_next", kF, {2});
  add_value(body->mutable_output(), "acc_copy", kF, {2});
  add_node(body, "Add", {"acc", "col"}, {"acc_next"});
  add_node(body, "Identity", {"acc_next"}, {"acc_copy"});
  return write_model(m, dir.file("scan.onnx"));
}

TEST(ControlFlow, ScanHonoursAxesAndDirections) {
  REQUIRE_OPS("Scan", "Add", "Identity");
  TempDir dir;
  auto out = run_at(scan_model(dir), 2, {{"s0", float_tensor({2}, {0, 100})}, {"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(values_of<float>((*out)[0].tensor), (std::vector<float>{6, 115}));
  // Iterations see columns 2, 1, 0; their partial sums are written at rows 2, 1, 0.
  EXPECT_EQ(values_of<float>((*out)[1].tensor), (std::vector<float>{6, 115, 5, 111, 3, 106}));
  auto empty = run_at(scan_model(dir), 2, {{"s0", float_tensor({2}, {1, 2})}, {"x", Tensor::allocate(DataType::kFloat32, {2, 0}).value()}});
  ASSERT_FALSE(empty.ok());  // x's declared shape [2, 3] refuses a length-0 sequence
}

TEST(ControlFlow, UnsupportedOpInsideABodyIsRefusedAtLoad) {
  REQUIRE_OPS("If");
  TempDir dir;
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "c", kB, {});
  add_value(g->mutable_output(), "y", kF, {1});
  auto* n = add_node(g, "If", {"c"}, {"y"}, "outer_if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* b = add_graph_attr(n, branch);
    add_value(b->mutable_output(), std::string(branch) + "_y", kF, {1});
    add_initializer<float>(b, std::string(branch) + "_c", kF, {1}, {1});
    add_node(b, "StringNormalizer", {std::string(branch) + "_c"}, {std::string(branch) + "_y"}, "inner_bad");
  }
  auto s = Session::load(write_model(m, dir.file("bad.onnx")));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().to_string().find("inner_bad"), std::string::npos) << s.error().to_string();
}

}  // namespace
}  // namespace glassbox::rt_test
