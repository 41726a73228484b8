// Graph passes: each one changes what it says (and logs it), can be disabled by
// name, and every opt level gives the same results as level 0.
#include <gtest/gtest.h>

#include "glassbox/session.h"
#include "glassbox/conformance.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

// BERT-style shape arithmetic: y = Reshape(x + 1, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
// plus an Identity, a dead branch and a constant subexpression.
std::string shape_chain_model(const TempDir& dir) {
  auto m = make_model(13);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1, 4}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, -1}, {"batch", ""});
  add_initializer<int64_t>(g, "zero", onnx::TensorProto::INT64, {}, {0});
  add_initializer<int64_t>(g, "minus_one", onnx::TensorProto::INT64, {1}, {-1});
  add_initializer<int64_t>(g, "axes0", onnx::TensorProto::INT64, {1}, {0});
  add_initializer<float>(g, "half", onnx::TensorProto::FLOAT, {1}, {0.5f});
  add_node(g, "Add", {"half", "half"}, {"one"}, "const_add");          // foldable
  add_node(g, "Identity", {"x"}, {"x_id"}, "identity");                // removable
  add_node(g, "Add", {"x_id", "one"}, {"x1"}, "add_one");
  add_node(g, "Shape", {"x_id"}, {"shape"}, "shape");                  // foldable once batch is known
  add_node(g, "Gather", {"shape", "zero"}, {"batch"}, "gather");
  add_node(g, "Unsqueeze", {"batch", "axes0"}, {"batch1"}, "unsqueeze");
  add_node(g, "Concat", {"batch1", "minus_one"}, {"new_shape"}, "concat")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  add_node(g, "Reshape", {"x1", "new_shape"}, {"y"}, "reshape");
  add_node(g, "Relu", {"x1"}, {"unused"}, "dead_relu");                // dead
  return write_model(m, dir.file("shape_chain.onnx"));
}

std::vector<float> iota_values(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.f;
  return v;
}

TEST(Passes, EveryLevelMatchesLevelZero) {
  REQUIRE_OPS("Add", "Identity", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
  TempDir dir;
  const std::string path = shape_chain_model(dir);
  std::vector<Session> sessions;
  for (int level = 0; level <= 2; ++level) {
    SessionOptions opts;
    opts.opt_level = level;
    auto s = Session::load(path, opts);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    sessions.push_back(std::move(s).value());
  }
  EXPECT_EQ(sessions[0].node_count(), 9u);
  EXPECT_TRUE(sessions[0].pass_log().empty());
  EXPECT_LT(sessions[1].node_count(), 9u);
  for (const Shape& shape : {Shape{1, 1, 4}, Shape{2, 3, 4}, Shape{3, 5, 4}, Shape{2, 3, 4}}) {
    const auto x = float_tensor(shape, iota_values(static_cast<size_t>(shape[0] * shape[1] * 4)));
    auto ref = sessions[0].run({{"x", x}});
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    std::vector<int64_t> nodes(3);
    for (int level = 1; level <= 2; ++level) {
      RunStats stats;
      auto out = sessions[level].run({{"x", x}}, &stats);
      nodes[level] = stats.nodes_executed;
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      EXPECT_EQ(runtime::compare_tensors((*out)[0].tensor, (*ref)[0].tensor, 0, 0), "") << "level " << level;
    }
    // Level 1: Add, Shape, Gather, Unsqueeze, Concat, Reshape; level 2 folds the shape chain once batch is known.
    EXPECT_EQ(nodes[1], 6);
    EXPECT_EQ(nodes[2], 2);
  }
}

TEST(Passes, EachPassLogsWhatItChanged) {
  REQUIRE_OPS("Add", "Identity", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
  TempDir dir;
  auto s = Session::load(shape_chain_model(dir));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  std::set<std::string> passes;
  std::string all;
  for (const auto& e : s->pass_log()) {
    passes.insert(e.pass);
    all += e.pass + ": " + e.message + "\n";
  }
  EXPECT_TRUE(passes.count("identity_removal")) << all;
  EXPECT_TRUE(passes.count("constant_folding")) << all;
  EXPECT_TRUE(passes.count("dead_node_elimination")) << all;
  EXPECT_NE(all.find("dead_relu"), std::string::npos) << all;
  EXPECT_NE(all.find("const_add"), std::string::npos) << all;
}

TEST(Passes, DisabledPassDoesNotRun) {
  REQUIRE_OPS("Add", "Identity", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu");
  TempDir dir;
  SessionOptions opts;
  opts.disabled_passes = {"identity_removal", "dead_node_elimination"};
  auto s = Session::load(shape_chain_model(dir), opts);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  for (const auto& e : s->pass_log()) {
    EXPECT_NE(e.pass, "identity_removal");
    EXPECT_NE(e.pass, "dead_node_elimination");
  }
}

TEST(Passes, UnknownPassNameIsAnError) {
  TempDir dir;
  auto m = make_model();
  add_value(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {1});
  add_value(m.mutable_graph()->mutable_output(), "x", onnx::TensorProto::FLOAT, {1});
  SessionOptions opts;
  opts.disabled_passes = {"constant_foldin"};
  auto s = Session::load(write_model(m, dir.file("m.onnx")), opts);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().to_string().find("constant_folding"), std::string::npos) << s.error().to_string();
}

TEST(Passes, NamesAreListed) {
  std::set<std::string> names;
  for (const auto& p : graph_pass_names()) names.insert(p.name);
  EXPECT_EQ(names, (std::set<std::string>{"cache_branch_inlining", "last_position_outputs", "identity_removal", "shape_folding", "constant_folding", "conv_epilogue_fusion", "dead_node_elimination",
                                                    "gelu_fusion", "matmul_epilogue_fusion", "layer_norm_fusion",
                                                    "layer_norm_quantize_fusion", "attention_softmax_fusion", "attention_fusion", "decoder_attention_fusion", "kv_cache_binding",
                                                    "quantized_matmul_fusion", "qkv_projection_fusion",
                                                    "packed_weights"}));
}

}  // namespace
}  // namespace glassbox::rt_test
