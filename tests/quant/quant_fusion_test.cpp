// quantized_matmul_fusion through Session on models written the way onnxruntime's
// quantizer writes them (built here with the protobuf API, so the test always runs):
//  - dynamic form (DynamicQuantizeLinear shared by two MatMulIntegers, per-tensor and
//    per-column weight scales / zero points, the scale Mul's operands in both orders,
//    one with a bias Add): fused (packed u8 x s8 GEMM), unfused with packed weights, and
//    level 0 (plain loops everywhere) must be bit-identical — the fused op does the same
//    integer sum, the same Cast rounding, the same float Mul and Add.
//  - QDQ form: fused vs level 0 within the bound derived from the roundings (below).
// Row counts 1, 7 and 300 (more than one 256-row block), batch 1 and 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

constexpr int64_t K = 40, N1 = 24, N2 = 20;

std::vector<int8_t> random_int8(size_t n, std::mt19937& rng) {
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  return v;
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo, float hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = std::uniform_real_distribution<float>(lo, hi)(rng);
  return v;
}

onnx::ModelProto dynamic_model() {
  std::mt19937 rng(3);
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1, K}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "y1", onnx::TensorProto::FLOAT, {-1, -1, N1}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "y2", onnx::TensorProto::FLOAT, {-1, -1, N2}, {"batch", "seq", ""});
  add_initializer(g, "w1", onnx::TensorProto::INT8, {K, N1}, random_int8(K * N1, rng));
  add_initializer(g, "w1_scale", onnx::TensorProto::FLOAT, {}, std::vector<float>{0.0123f});
  add_initializer(g, "w1_zp", onnx::TensorProto::INT8, {}, std::vector<int8_t>{0});
  add_initializer(g, "b1", onnx::TensorProto::FLOAT, {N1}, random_floats(N1, rng, -1.f, 1.f));
  add_initializer(g, "w2", onnx::TensorProto::INT8, {K, N2}, random_int8(K * N2, rng));
  add_initializer(g, "w2_scale", onnx::TensorProto::FLOAT, {N2}, random_floats(N2, rng, 0.001f, 0.03f));
  std::vector<int8_t> zp2(N2);
  for (int64_t j = 0; j < N2; ++j) zp2[j] = static_cast<int8_t>(j % 7 - 3);  // non-zero per-column zero points
  add_initializer(g, "w2_zp", onnx::TensorProto::INT8, {N2}, zp2);
  add_node(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  add_node(g, "MatMulInteger", {"xq", "w1", "xz", "w1_zp"}, {"i1"});
  add_int_attr(add_node(g, "Cast", {"i1"}, {"f1"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"xs", "w1_scale"}, {"s1"});
  add_node(g, "Mul", {"f1", "s1"}, {"p1"});
  add_node(g, "Add", {"p1", "b1"}, {"y1"});
  add_node(g, "MatMulInteger", {"xq", "w2", "xz", "w2_zp"}, {"i2"});
  add_int_attr(add_node(g, "Cast", {"i2"}, {"f2"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"w2_scale", "xs"}, {"s2"});
  add_node(g, "Mul", {"s2", "f2"}, {"y2"});
  return m;
}

constexpr float kActScale = 8.f / 255.f;

onnx::ModelProto qdq_model() {
  std::mt19937 rng(4);
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1, K}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, -1, N1}, {"batch", "seq", ""});
  add_initializer(g, "xs", onnx::TensorProto::FLOAT, {}, std::vector<float>{kActScale});
  add_initializer(g, "xz", onnx::TensorProto::UINT8, {}, std::vector<uint8_t>{128});
  add_initializer(g, "wq", onnx::TensorProto::INT8, {K, N1}, random_int8(K * N1, rng));
  add_initializer(g, "ws", onnx::TensorProto::FLOAT, {N1}, random_floats(N1, rng, 0.001f, 0.03f));
  add_initializer(g, "wz", onnx::TensorProto::INT8, {N1}, std::vector<int8_t>(N1, 0));
  add_initializer(g, "b", onnx::TensorProto::FLOAT, {N1}, random_floats(N1, rng, -1.f, 1.f));
  add_node(g, "QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  add_node(g, "DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  add_int_attr(add_node(g, "DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}), "axis", 1);
  add_node(g, "MatMul", {"xd", "wd"}, {"p"});
  add_node(g, "Add", {"p", "b"}, {"y"});
  return m;
}

Session load(const std::string& path, int opt_level, std::vector<std::string> disabled) {
  SessionOptions o;
  o.opt_level = opt_level;
  o.threads = 2;
  o.disabled_passes = std::move(disabled);
  auto s = Session::load(path, o);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return std::move(s).value();
}

int fired(const Session& s) {
  int n = 0;
  for (const auto& e : s.pass_log()) n += e.pass == "quantized_matmul_fusion";
  return n;
}

struct Shape3 {
  int64_t batch, seq;
};
const Shape3 kShapes[] = {{1, 1}, {1, 7}, {2, 150}};

TEST(QuantFusion, DynamicFormFusedEqualsUnfusedBitForBit) {
  TempDir dir;
  const std::string path = write_model(dynamic_model(), dir.file("dyn.onnx"));
  Session fused = load(path, 2, {});
  Session unfused = load(path, 2, {"quantized_matmul_fusion"});
  Session plain = load(path, 0, {});
  EXPECT_EQ(fired(fused), 2);
  EXPECT_EQ(fired(unfused), 0);
  EXPECT_LT(fused.node_count() + 6, unfused.node_count());
  std::mt19937 rng(9);
  for (const auto& sh : kShapes) {
    SCOPED_TRACE("batch " + std::to_string(sh.batch) + " seq " + std::to_string(sh.seq));
    auto x = random_floats(static_cast<size_t>(sh.batch * sh.seq * K), rng, -3.f, 5.f);
    std::vector<NamedTensor> in{{"x", float_tensor({sh.batch, sh.seq, K}, x)}};
    auto want = plain.run(in);
    ASSERT_TRUE(want.ok()) << want.error().to_string();
    for (Session* s : {&fused, &unfused}) {
      auto got = s->run(in);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      for (size_t k = 0; k < 2; ++k) {
        ASSERT_EQ((*got)[k].tensor.shape(), (*want)[k].tensor.shape());
        const auto a = values_of<float>((*got)[k].tensor), b = values_of<float>((*want)[k].tensor);
        int64_t diff = 0;
        for (size_t i = 0; i < a.size(); ++i) diff += a[i] != b[i];
        EXPECT_EQ(diff, 0) << "output " << k << (s == &fused ? " (fused)" : " (unfused)");
      }
    }
  }
}

// Bound for the QDQ form. Level 0 computes sum_k fl(fl(a_k) * fl(w_kj)) in float (a_k, w_kj the
// dequantized values, each rounded once), the fused op fl(fl(float(S) * fl(sa * sw_j))) with S
// the exact integer sum. With u = 2^-24 and P = sum_k |a_k w_kj| (exact, in double), each side
// is within (K + 2) u P of the exact real sum (float summation of K terms: (K - 1) u P; the
// dequantization and product roundings: 3 u per term, bounded together by (K + 2) u P once
// K >= 1), so they differ by at most 2 (K + 4) u P, plus one rounding of the bias Add (u |y|).
TEST(QuantFusion, QdqFormWithinRoundingBound) {
  TempDir dir;
  const auto model = qdq_model();
  const std::string path = write_model(model, dir.file("qdq.onnx"));
  Session fused = load(path, 2, {});
  Session plain = load(path, 0, {});
  EXPECT_EQ(fired(fused), 1);
  // the weights and scales, read back from the model
  const auto& g = model.graph();
  std::map<std::string, const onnx::TensorProto*> init;
  for (const auto& t : g.initializer()) init[t.name()] = &t;
  const auto* wq = reinterpret_cast<const int8_t*>(init["wq"]->raw_data().data());
  const auto* ws = reinterpret_cast<const float*>(init["ws"]->raw_data().data());
  const double u = std::ldexp(1.0, -24);
  std::mt19937 rng(10);
  for (const auto& sh : kShapes) {
    SCOPED_TRACE("batch " + std::to_string(sh.batch) + " seq " + std::to_string(sh.seq));
    auto x = random_floats(static_cast<size_t>(sh.batch * sh.seq * K), rng, -5.f, 5.f);  // some saturate
    std::vector<NamedTensor> in{{"x", float_tensor({sh.batch, sh.seq, K}, x)}};
    auto want = plain.run(in);
    auto got = fused.run(in);
    ASSERT_TRUE(want.ok() && got.ok());
    const auto a = values_of<float>((*got)[0].tensor), b = values_of<float>((*want)[0].tensor);
    ASSERT_EQ(a.size(), static_cast<size_t>(sh.batch * sh.seq * N1));
    double worst = 0;
    for (int64_t r = 0; r < sh.batch * sh.seq; ++r)
      for (int64_t j = 0; j < N1; ++j) {
        double P = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double q = std::clamp(std::nearbyint(x[r * K + k] / kActScale) + 128.0, 0.0, 255.0);
          P += std::fabs((q - 128.0) * kActScale * wq[k * N1 + j] * ws[j]);
        }
        const double y = b[r * N1 + j];
        const double bound = 2.0 * (K + 4) * u * P + u * std::fabs(y) + 1e-30;
        const double d = std::fabs(double(a[r * N1 + j]) - y);
        worst = std::max(worst, d / bound);
        ASSERT_LE(d, bound) << "row " << r << " col " << j;
      }
    std::printf("QDQ fused vs level 0: worst difference %.3f of the bound\n", worst);
  }
}

// A quantized encoder feed-forward block as onnxruntime's dynamic quantizer leaves it:
//   x -> DynamicQuantizeLinear -> MatMulInteger(w1) -> Cast -> Mul(scales) -> Add(b1) -> GELU (erf form, as
//   torch.onnx writes it) -> DynamicQuantizeLinear -> MatMulInteger(w2) -> Cast -> Mul -> Add(b2) -> Add(x)
// matmul_epilogue_fusion gives the first MatMulIntegerToFloat the GELU and the second the residual.
constexpr int64_t kFf = 52;  // 3 vectors of 16 and a tail of 4; K = 40: 2 vectors and a tail of 8

onnx::ModelProto quantized_ffn_model() {
  std::mt19937 rng(5);
  auto m = make_model(14);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, -1, K}, {"batch", "seq", ""});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {-1, -1, K}, {"batch", "seq", ""});
  add_initializer(g, "w1", onnx::TensorProto::INT8, {K, kFf}, random_int8(K * kFf, rng));
  add_initializer(g, "w1_scale", onnx::TensorProto::FLOAT, {kFf}, random_floats(kFf, rng, 0.001f, 0.03f));
  add_initializer(g, "w1_zp", onnx::TensorProto::INT8, {kFf}, std::vector<int8_t>(kFf, 0));
  add_initializer(g, "b1", onnx::TensorProto::FLOAT, {kFf}, random_floats(kFf, rng, -1.f, 1.f));
  add_initializer(g, "w2", onnx::TensorProto::INT8, {kFf, K}, random_int8(kFf * K, rng));
  add_initializer(g, "w2_scale", onnx::TensorProto::FLOAT, {}, std::vector<float>{0.0071f});
  add_initializer(g, "b2", onnx::TensorProto::FLOAT, {K}, random_floats(K, rng, -1.f, 1.f));
  add_initializer(g, "sqrt2", onnx::TensorProto::FLOAT, {}, std::vector<float>{1.41421356f});
  add_initializer(g, "one", onnx::TensorProto::FLOAT, {}, std::vector<float>{1.f});
  add_initializer(g, "half", onnx::TensorProto::FLOAT, {}, std::vector<float>{0.5f});
  add_node(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  add_node(g, "MatMulInteger", {"xq", "w1", "xz", "w1_zp"}, {"i1"});
  add_int_attr(add_node(g, "Cast", {"i1"}, {"f1"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"xs", "w1_scale"}, {"s1"});
  add_node(g, "Mul", {"f1", "s1"}, {"p1"});
  add_node(g, "Add", {"p1", "b1"}, {"h"});
  add_node(g, "Div", {"h", "sqrt2"}, {"hd"});
  add_node(g, "Erf", {"hd"}, {"he"});
  add_node(g, "Add", {"he", "one"}, {"hp"});
  add_node(g, "Mul", {"h", "hp"}, {"hm"});
  add_node(g, "Mul", {"hm", "half"}, {"gelu"});
  add_node(g, "DynamicQuantizeLinear", {"gelu"}, {"gq", "gs", "gz"});
  add_node(g, "MatMulInteger", {"gq", "w2", "gz"}, {"i2"});
  add_int_attr(add_node(g, "Cast", {"i2"}, {"f2"}), "to", onnx::TensorProto::FLOAT);
  add_node(g, "Mul", {"gs", "w2_scale"}, {"s2"});
  add_node(g, "Mul", {"f2", "s2"}, {"p2"});
  add_node(g, "Add", {"p2", "b2"}, {"o"});
  add_node(g, "Add", {"o", "x"}, {"y"});
  return m;
}

int fired_on_quantized(const Session& s) {
  int n = 0;
  for (const auto& e : s.pass_log())
    n += e.pass == "matmul_epilogue_fusion" && e.message.find("-> MatMulIntegerToFloat") != std::string::npos;
  return n;
}

// The fused epilogue runs the Gelu op's kernel and the same float add on each finished row
// segment: with and without matmul_epilogue_fusion the outputs must be identical. Level 0
// (Erf through std::erf, every node separate) only agrees within a quantization step of the
// second layer's input, so it is a sanity bound here, not the exactness check.
TEST(QuantFusion, GeluAndResidualEpilogueBitForBit) {
  TempDir dir;
  const std::string path = write_model(quantized_ffn_model(), dir.file("ffn.onnx"));
  Session fused = load(path, 2, {});
  Session unfused = load(path, 2, {"matmul_epilogue_fusion"});
  Session plain = load(path, 0, {});
  EXPECT_EQ(fired(fused), 2);
  EXPECT_EQ(fired_on_quantized(fused), 2);
  EXPECT_EQ(fired_on_quantized(unfused), 0);
  EXPECT_EQ(fused.node_count() + 2, unfused.node_count());  // the Gelu and the residual Add
  std::mt19937 rng(11);
  for (const auto& sh : kShapes) {
    SCOPED_TRACE("batch " + std::to_string(sh.batch) + " seq " + std::to_string(sh.seq));
    auto x = random_floats(static_cast<size_t>(sh.batch * sh.seq * K), rng, -3.f, 3.f);
    std::vector<NamedTensor> in{{"x", float_tensor({sh.batch, sh.seq, K}, x)}};
    auto a = fused.run(in), b = unfused.run(in), c = plain.run(in);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    const auto va = values_of<float>((*a)[0].tensor), vb = values_of<float>((*b)[0].tensor),
               vc = values_of<float>((*c)[0].tensor);
    ASSERT_EQ(va.size(), static_cast<size_t>(sh.batch * sh.seq * K));
    int64_t diff = 0;
    double far = 0;
    for (size_t i = 0; i < va.size(); ++i) {
      diff += va[i] != vb[i];
      far = std::max(far, std::fabs(double(va[i]) - vc[i]));
    }
    EXPECT_EQ(diff, 0);
    EXPECT_LT(far, 0.05) << "fused vs level 0";
  }
}

}  // namespace
}  // namespace glassbox::rt_test
