// SessionOptions::last_position_outputs (graph pass last_position_outputs): a named output made by a
// MatMul + per-position epilogue is computed for the last position only, with the values the whole
// output has there; a chain the pass cannot cut stays whole and the pass log says why; a name that is
// not an output is an error. (The decoders of every layout: tests/generation/session_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

// logits = MatMul(h, W) + b, h [batch, seq, 4], W [4, 6]; with `also_read`, the MatMul's output is also
// a second output (so cutting it would change that one too).
std::string head_model(const TempDir& dir, bool also_read) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "h", onnx::TensorProto::FLOAT, {-1, -1, 4}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "logits", onnx::TensorProto::FLOAT, {-1, -1, 6}, {"batch", "seq", ""});
  std::vector<float> w(24), b(6);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(static_cast<float>(i) * 0.7f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(i) - 0.5f;
  add_initializer<float>(g, "W", onnx::TensorProto::FLOAT, {4, 6}, w);
  add_initializer<float>(g, "b", onnx::TensorProto::FLOAT, {6}, b);
  add_node(g, "MatMul", {"h", "W"}, {"m"}, "lm_head");
  add_node(g, "Add", {"m", "b"}, {"logits"}, "bias");
  if (also_read) {
    add_value(g->mutable_output(), "scores", onnx::TensorProto::FLOAT, {-1, -1, 6}, {"batch", "seq", ""});
    add_node(g, "Relu", {"m"}, {"scores"}, "relu");
  }
  return write_model(m, dir.file(also_read ? "head_read_twice.onnx" : "head.onnx"));
}

std::string log_of(const Session& s) {
  std::string all;
  for (const auto& e : s.pass_log())
    if (e.pass == "last_position_outputs") all += e.message + "\n";
  return all;
}

TEST(LastPositionOutputs, TheLastRowEqualsTheWholeOutputsLastRow) {
  TempDir dir;
  const std::string path = head_model(dir, false);
  auto whole = Session::load(path);
  ASSERT_TRUE(whole.ok()) << whole.error().to_string();
  SessionOptions opts;
  opts.last_position_outputs = {"logits"};
  auto last = Session::load(path, opts);
  ASSERT_TRUE(last.ok()) << last.error().to_string();
  EXPECT_NE(log_of(*last).find("'logits' for the last position only: Slice 'lm_head/last_position' feeds MatMul 'lm_head'"),
            std::string::npos) << log_of(*last);
  EXPECT_EQ(last->outputs()[0].dims, (std::vector<int64_t>{-1, 1, 6}));
  EXPECT_EQ(whole->outputs()[0].dims, (std::vector<int64_t>{-1, -1, 6}));
  for (const Shape& shape : {Shape{1, 1, 4}, Shape{2, 5, 4}, Shape{3, 2, 4}}) {
    std::vector<float> x(static_cast<size_t>(shape[0] * shape[1] * 4));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i) * 0.3f);
    auto a = whole->run({{"h", float_tensor(shape, x)}});
    auto l = last->run({{"h", float_tensor(shape, x)}});
    ASSERT_TRUE(a.ok() && l.ok());
    ASSERT_EQ((*l)[0].tensor.shape(), (Shape{shape[0], 1, 6}));
    for (int64_t bi = 0; bi < shape[0]; ++bi)
      for (int64_t v = 0; v < 6; ++v)
        EXPECT_NEAR((*l)[0].tensor.data<float>()[bi * 6 + v],
                    (*a)[0].tensor.data<float>()[(bi * shape[1] + shape[1] - 1) * 6 + v], 1e-6)
            << "batch row " << bi << ", column " << v;
  }
}

TEST(LastPositionOutputs, AValueReadElsewhereKeepsTheOutputWhole) {
  TempDir dir;
  SessionOptions opts;
  opts.last_position_outputs = {"logits"};
  auto s = Session::load(head_model(dir, true), opts);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_NE(log_of(*s).find("'logits' kept at every position: 'm' is read by more than the chain to the output"),
            std::string::npos) << log_of(*s);
  auto out = s->run({{"h", float_tensor({2, 3, 4}, std::vector<float>(24, 0.5f))}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{2, 3, 6}));
  EXPECT_EQ((*out)[1].tensor.shape(), (Shape{2, 3, 6}));
}

TEST(LastPositionOutputs, ANameThatIsNoOutputIsAnError) {
  TempDir dir;
  SessionOptions opts;
  opts.last_position_outputs = {"logit"};
  auto s = Session::load(head_model(dir, false), opts);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().to_string().find("'logit', not an output of the model"), std::string::npos) << s.error().to_string();
}

TEST(LastPositionOutputs, OffByDefaultAndAtOptLevelZero) {
  TempDir dir;
  const std::string path = head_model(dir, false);
  SessionOptions opts;
  opts.last_position_outputs = {"logits"};
  opts.opt_level = 0;
  auto s = Session::load(path, opts);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(log_of(*s), "");
  EXPECT_EQ(s->outputs()[0].dims, (std::vector<int64_t>{-1, -1, 6}));
}

}  // namespace
}  // namespace glassbox::rt_test
