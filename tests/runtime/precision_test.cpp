// SessionOptions::precision: validation (bf16 and int8-dynamic need packed weights), which
// nodes take the lower-precision path, and a bf16 / int8-dynamic session against the fp32
// one on the torch.onnx-exported tiny BERT: every node before the first GEMM on constant
// weights is bitwise identical, that GEMM stays inside the bound derived from the
// precision's rounding (bf16: tests/ops_math/bf16_gemm_test.cpp; int8-dynamic: the
// quantization steps, tests/quant/int8_dynamic_test.cpp), and the outputs stay within the
// declared accuracy threshold of `glassbox accuracy` (2e-2 normwise) while differing from fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "bert_inputs.h"
#include "glassbox/session.h"

namespace glassbox::rt_test {
namespace {

const char* kModel = "bert_tiny_op17";

#define REQUIRE_MODEL()                                                  \
  if (!std::filesystem::exists(generated_model_path(kModel))) GTEST_FAIL() \
      << "the generated test models are missing: run scripts/make_test_models.py"

Session load(Precision p, SessionOptions o = {}) {
  o.precision = p;
  o.threads = 2;
  auto s = Session::load(generated_model_path(kModel), o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
  return std::move(s).value();
}

TEST(Precision, NamesParseAndUnknownIsRefused) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic}) {
    auto back = parse_precision(precision_name(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
  auto bad = parse_precision("fp16");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().what.find("fp16"), std::string::npos);
  EXPECT_NE(bad.error().fix.find("bf16"), std::string::npos);
  EXPECT_EQ(SessionOptions{}.precision, Precision::kFp32);
}

TEST(Precision, LowerPrecisionWithoutPackedWeightsIsRefused) {
  REQUIRE_MODEL();
  for (Precision p : {Precision::kBf16, Precision::kInt8Dynamic}) {
    SessionOptions level0;
    level0.opt_level = 0;
    level0.precision = p;
    auto a = Session::load(generated_model_path(kModel), level0);
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().what.find("packed_weights"), std::string::npos) << a.error().to_string();
    EXPECT_NE(a.error().what.find(precision_name(p)), std::string::npos) << a.error().to_string();
    SessionOptions disabled;
    disabled.disabled_passes = {"packed_weights"};
    disabled.precision = p;
    auto b = Session::load(generated_model_path(kModel), disabled);
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().what.find("disabled"), std::string::npos) << b.error().to_string();
  }
}

// The linear layers (constant 2-D weights) and only they are listed: 2 layers x 4 (Q, K and V
// are one product, qkv_projection_fusion) + the pooler's Gemm; the attention products
// (activation x activation) stay fp32.
TEST(Precision, LowerPrecisionOpsAreListed) {
  REQUIRE_MODEL();
  Session fp32 = load(Precision::kFp32);
  for (const auto& d : fp32.op_decisions()) {
    EXPECT_NE(d.decision.rfind("bf16:", 0), 0u) << d.node;
    EXPECT_NE(d.decision.rfind("int8-dynamic:", 0), 0u) << d.node;
  }
  for (Precision p : {Precision::kBf16, Precision::kInt8Dynamic}) {
    Session s = load(p);
    const std::string prefix = std::string(precision_name(p)) + ":";
    int listed = 0, gemm = 0;
    for (const auto& d : s.op_decisions()) {
      if (d.decision.rfind(prefix, 0) != 0) continue;
      ++listed;
      if (d.op_type == "Gemm") ++gemm;
      EXPECT_TRUE(d.op_type == "MatMul" || d.op_type == "FusedMatMul" || d.op_type == "Gemm") << d.op_type;
      EXPECT_NE(d.decision.find("oneDNN"), std::string::npos);
    }
    EXPECT_EQ(listed, 9) << prefix;
    EXPECT_EQ(gemm, 1) << prefix;
  }
}

struct Captured {
  std::vector<std::string> order;             // output names in execution order
  std::map<std::string, Tensor> outputs;      // every node output
  std::map<std::string, std::vector<Tensor>> inputs;  // inputs of every node, by its first output
  std::map<std::string, std::string> op_of;   // output name -> op type
};

Captured capture(Session& s, const std::vector<NamedTensor>& in) {
  Captured c;
  s.set_observer([&](const NodeEvent& e) -> Status {
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      if (!e.outputs[i]) continue;
      c.order.push_back(e.output_names[i]);
      c.outputs[e.output_names[i]] = e.outputs[i]->clone().value();
      c.op_of[e.output_names[i]] = e.op_type;
    }
    auto& ins = c.inputs[e.output_names.empty() ? e.node_name : e.output_names[0]];
    for (const Tensor* t : e.inputs) ins.push_back(t ? t->clone().value() : Tensor());
    return {};
  });
  auto r = s.run(in);
  s.set_observer(nullptr);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return c;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Bound on |got - ref| of element (i, j) of the first weight GEMM (ref in double, bias included).
struct GemmElement {
  const float* a;  // row i of A, K values
  const float* w;  // W [K, N]
  int64_t K, N, j;
  double ref, bias;
};
using ElementBound = std::function<double(const GemmElement&)>;

// bf16: a' = a(1 + d1), w' = w(1 + d2), |d| <= u = 2^-8, fp32 sums of K products.
double bf16_bound(const GemmElement& e) {
  const double u = 1.0 / 256, eps = 1.0 / (1 << 24);
  const double factor = 2 * u + u * u + (e.K * eps / (1 - e.K * eps)) * (1 + u) * (1 + u);
  double scale = 0;
  for (int64_t k = 0; k < e.K; ++k) scale += std::fabs(double(e.a[k]) * e.w[k * e.N + e.j]);
  return factor * scale + 2 * eps * (std::fabs(e.ref) + std::fabs(e.bias));
}

// int8-dynamic (derivation in tests/quant/int8_dynamic_test.cpp): row step sa = (max(0, max a) -
// min(0, min a)) / 255, column step sb = max |w| / 127, |C - a.w| <= sa/2 S|w| + sb/2 S|a| + K sa sb / 4,
// half steps with a (1 + 2^-14) slack for the float scales, 4 float roundings of |C| + |bias|.
double int8_bound(const GemmElement& e) {
  const double eps = 1.0 / (1 << 24), slack = 1.0 + 1.0 / (1 << 14);
  double lo = 0, hi = 0, sum_a = 0, sum_w = 0, wmax = 0;
  for (int64_t k = 0; k < e.K; ++k) {
    lo = std::min(lo, double(e.a[k]));
    hi = std::max(hi, double(e.a[k]));
    sum_a += std::fabs(e.a[k]);
    const double w = e.w[k * e.N + e.j];
    sum_w += std::fabs(w);
    wmax = std::max(wmax, std::fabs(w));
  }
  const double sa = hi > lo ? (hi - lo) / 255 : 1.0, sb = wmax / 127;
  const double q = slack * (sa / 2 * sum_w + sb / 2 * sum_a) + slack * slack * e.K * sa * sb / 4;
  return q + 4 * eps * (std::fabs(e.ref) + q + std::fabs(e.bias));
}

void check_against_fp32(Precision p, const ElementBound& bound) {
  Session fp32 = load(Precision::kFp32);
  Session low = load(p);
  const auto in = bert_inputs(fp32, 24, {24, 17}, 5);
  const Captured a = capture(fp32, in), b = capture(low, in);
  ASSERT_EQ(a.order, b.order);
  // Until the first GEMM on constant weights, both runs are the same arithmetic.
  size_t first = 0;
  while (first < a.order.size()) {
    const std::string& name = a.order[first];
    const std::string& op = a.op_of.at(name);
    const auto& ins = a.inputs.count(name) ? a.inputs.at(name) : std::vector<Tensor>{};
    const bool weight_gemm = (op == "MatMul" || op == "FusedMatMul") && ins.size() >= 2 && ins[1].defined() &&
                             ins[1].rank() == 2 && ins[1].dtype() == DataType::kFloat32 && ins[0].rank() == 3;
    if (weight_gemm) break;
    EXPECT_TRUE(bitwise_equal(a.outputs.at(name), b.outputs.at(name))) << "'" << name << "' (" << op << ") differs";
    ++first;
  }
  ASSERT_LT(first, a.order.size()) << "no GEMM on constant weights found";
  // That GEMM saw identical inputs: its output must satisfy the precision's bound.
  const std::string& name = a.order[first];
  const auto& ins = b.inputs.at(name);
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i].defined()) {
      ASSERT_TRUE(bitwise_equal(ins[i], a.inputs.at(name)[i])) << "input " << i << " of " << name;
    }
  const Tensor& A = ins[0];
  const Tensor& W = ins[1];
  const bool has_bias = ins.size() >= 3 && ins[2].defined();
  ASSERT_TRUE(ins.size() <= 3 || !ins[3].defined()) << "the first GEMM has a residual input; extend the bound";
  const int64_t K = W.shape()[0], N = W.shape()[1], M = A.numel() / K;
  const float* pa = A.data<float>();
  const float* pw = W.data<float>();
  const float* got = b.outputs.at(name).data<float>();
  int64_t bad = 0;
  double max_err = 0, worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += double(pa[i * K + k]) * pw[k * N + j];
      const double bias = has_bias ? ins[2].data<float>()[j] : 0.0;
      ref += bias;
      const double limit = bound({pa + i * K, pw, K, N, j, ref, bias});
      const double err = std::fabs(got[i * N + j] - ref);
      if (!(err <= limit)) ++bad;
      max_err = std::max(max_err, err);
      worst = std::max(worst, err / limit);
    }
  EXPECT_EQ(bad, 0) << "first " << precision_name(p) << " GEMM '" << name << "' outside the derived bound (worst "
                    << worst << " of it)";
  EXPECT_GT(max_err, 1e-6) << "first GEMM '" << name << "' looks like fp32";
  // Graph outputs: within the declared accuracy threshold, and not silently fp32.
  auto oa = fp32.run(in), ob = low.run(in);
  ASSERT_TRUE(oa.ok() && ob.ok());
  for (size_t k = 0; k < oa->size(); ++k) {
    const Tensor& x = (*oa)[k].tensor;
    const Tensor& y = (*ob)[k].tensor;
    double max_diff = 0, max_ref = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      max_diff = std::max(max_diff, std::fabs(double(y.data<float>()[i]) - x.data<float>()[i]));
      max_ref = std::max(max_ref, std::fabs(double(x.data<float>()[i])));
    }
    std::printf("%s output %s: normwise relative error %.3g\n", precision_name(p), (*oa)[k].name.c_str(), max_diff / max_ref);
    EXPECT_LE(max_diff / max_ref, 2e-2) << (*oa)[k].name;
    EXPECT_GT(max_diff, 0.0) << (*oa)[k].name << " is bitwise fp32";
  }
}

TEST(Precision, Bf16SessionAgainstFp32) {
  REQUIRE_MODEL();
  check_against_fp32(Precision::kBf16, bf16_bound);
}

TEST(Precision, Int8DynamicSessionAgainstFp32) {
  REQUIRE_MODEL();
  check_against_fp32(Precision::kInt8Dynamic, int8_bound);
}

}  // namespace
}  // namespace glassbox::rt_test
