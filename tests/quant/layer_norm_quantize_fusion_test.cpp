// layer_norm_quantize_fusion through Session: a torch-style LayerNorm (fused by layer_norm_fusion)
// whose output feeds a DynamicQuantizeLinear shared by two MatMulIntegers (onnxruntime's
// quantize_dynamic form) and is also read as a residual. With the pass on, one
// glassbox::LayerNormDynamicQuantize replaces the two nodes; every output — the float LayerNorm
// output, the uint8 values, scale and zero point, and the products — must equal the unfused
// run's (pass disabled) bit for bit, for one row, a few rows, rows across several pool chunks,
// a large offset, and an all-zero input (every row normalizes to beta).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

constexpr int64_t C = 48, N = 24;

onnx::ModelProto model() {
  std::mt19937 rng(21);
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1, C}, {"batch", "seq", ""});
  for (const char* o : {"ln", "res", "xq", "xs", "xz", "y1", "y2"}) {
    const bool scalar = std::strcmp(o, "xs") == 0 || std::strcmp(o, "xz") == 0;
    const auto type = std::strcmp(o, "xq") == 0 || std::strcmp(o, "xz") == 0 ? onnx::TensorProto::UINT8
                      : std::strcmp(o, "y1") == 0 || std::strcmp(o, "y2") == 0 ? onnx::TensorProto::INT32
                                                                               : onnx::TensorProto::FLOAT;
    add_value(g->mutable_output(), o, type, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{-1, -1, -1});
  }
  std::vector<float> gamma(C), beta(C);
  for (auto& v : gamma) v = std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
  for (auto& v : beta) v = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
  add_initializer(g, "gamma", onnx::TensorProto::FLOAT, {C}, gamma);
  add_initializer(g, "beta", onnx::TensorProto::FLOAT, {C}, beta);
  add_initializer(g, "two", onnx::TensorProto::FLOAT, {}, std::vector<float>{2.f});
  add_initializer(g, "eps", onnx::TensorProto::FLOAT, {}, std::vector<float>{1e-12f});
  std::vector<int8_t> w(C * N);
  for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  add_initializer(g, "w", onnx::TensorProto::INT8, {C, N}, w);
  add_initializer(g, "wz", onnx::TensorProto::INT8, {}, std::vector<int8_t>{0});
  add_ints_attr(add_node(g, "ReduceMean", {"x"}, {"m"}), "axes", {-1});
  add_node(g, "Sub", {"x", "m"}, {"d"});
  add_node(g, "Pow", {"d", "two"}, {"d2"});
  add_ints_attr(add_node(g, "ReduceMean", {"d2"}, {"v"}), "axes", {-1});
  add_node(g, "Add", {"v", "eps"}, {"ve"});
  add_node(g, "Sqrt", {"ve"}, {"sd"});
  add_node(g, "Div", {"d", "sd"}, {"n"});
  add_node(g, "Mul", {"n", "gamma"}, {"ng"});
  add_node(g, "Add", {"ng", "beta"}, {"ln"});
  add_node(g, "Add", {"ln", "x"}, {"res"});  // the residual reads the float output too
  add_node(g, "DynamicQuantizeLinear", {"ln"}, {"xq", "xs", "xz"});
  add_node(g, "MatMulInteger", {"xq", "w", "xz", "wz"}, {"y1"});
  add_node(g, "MatMulInteger", {"xq", "w", "xz"}, {"y2"});
  return m;
}

Session load(const std::string& path, std::vector<std::string> disabled) {
  SessionOptions o;
  o.threads = 3;
  o.disabled_passes = std::move(disabled);
  auto s = Session::load(path, o);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return std::move(s).value();
}

int fired(const Session& s, const char* pass) {
  int n = 0;
  for (const auto& e : s.pass_log()) n += e.pass == pass;
  return n;
}

TEST(LayerNormQuantizeFusion, FusedEqualsUnfusedBitForBit) {
  TempDir dir;
  const std::string path = write_model(model(), dir.file("ln_dq.onnx"));
  Session fused = load(path, {});
  Session unfused = load(path, {"layer_norm_quantize_fusion"});
  EXPECT_EQ(fired(fused, "layer_norm_fusion"), 1);
  EXPECT_EQ(fired(fused, "layer_norm_quantize_fusion"), 1);
  EXPECT_EQ(fired(unfused, "layer_norm_quantize_fusion"), 0);
  EXPECT_EQ(fused.node_count() + 1, unfused.node_count());
  std::mt19937 rng(5);
  struct Case {
    int64_t batch, seq;
    float offset;
    bool constant;
  };
  // 2 x 700 x 48 = 67200 values: several pool chunks and row blocks.
  for (const Case& c : {Case{1, 1, 0.f, false}, Case{1, 7, 0.f, false}, Case{2, 700, 0.f, false},
                        Case{1, 33, 1000.f, false}, Case{1, 5, 0.f, true}}) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " seq " + std::to_string(c.seq) + " offset " +
                 std::to_string(c.offset) + (c.constant ? " constant" : ""));
    std::vector<float> x(static_cast<size_t>(c.batch * c.seq * C));
    for (auto& v : x) v = c.constant ? 0.f : c.offset + std::uniform_real_distribution<float>(-4.f, 6.f)(rng);
    std::vector<NamedTensor> in{{"x", float_tensor({c.batch, c.seq, C}, x)}};
    auto want = unfused.run(in);
    auto got = fused.run(in);
    ASSERT_TRUE(want.ok()) << want.error().to_string();
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t k = 0; k < got->size(); ++k) {
      const Tensor& a = (*got)[k].tensor;
      const Tensor& b = (*want)[k].tensor;
      ASSERT_EQ(a.dtype(), b.dtype()) << (*got)[k].name;
      ASSERT_EQ(a.shape(), b.shape()) << (*got)[k].name;
      EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << "output " << (*got)[k].name << " differs";
    }
  }
}

}  // namespace
}  // namespace glassbox::rt_test
