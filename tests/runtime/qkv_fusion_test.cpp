// qkv_projection_fusion (src/graph/passes/qkv_projection_fusion.cpp):
//  - on the torch.onnx exports it fires once per layer (tiny test models always; the DistilBERT
//    and MiniLM benchmark exports when present) and the executed graph has two
//    projections fewer per layer;
//  - the fused graph equals the unfused one (--disable-pass qkv_projection_fusion) in fp32,
//    bf16 and int8-dynamic on awkward shapes (one token, padding, batch > 1, > 256 rows);
//  - on hand-built graphs it fuses exactly what it may: not when the three projections read
//    different inputs, when a weight is not an initializer, when Q has another reader, when a
//    projection has an activation or another width, or when the quantized projections do not
//    share their activation's scale; the quantized form concatenates per-column scales and
//    zero points (a scalar repeated).
// Parity with onnxruntime-node runs through the default passes in tests/parity (fp32) and
// tests/quant/quant_peer_test.js (the quantized-file form).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "bert_inputs.h"
#include "glassbox/session.h"
#include "graph/passes/passes.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

constexpr const char* kPass = "qkv_projection_fusion";

std::map<std::string, int> executed_ops(Session& s, const std::vector<NamedTensor>& in) {
  std::map<std::string, int> ops;
  auto out = s.run_observed(in, [&](const NodeEvent& e) {
    ops[e.op_type]++;
    return Status{};
  });
  EXPECT_TRUE(out.ok()) << out.error().to_string();
  return ops;
}

int fired(const Session& s) {
  int n = 0;
  for (const auto& e : s.pass_log()) n += e.pass == kPass;
  return n;
}

TEST(QkvFusion, FiresOnEveryLayerOfTheOpset14Exports) {
  // name, layers; the tiny models are generated for every test run, the others are the benchmark
  // exports (scripts/make_test_models.py --bench), checked when present (BERT-base, the same
  // export with 12 layers, is left out: loading 440 MB under ASan costs more than it adds).
  const std::vector<std::pair<const char*, int>> models = {
      {"bert_tiny_op13", 2}, {"bert_tiny_op14", 2},        {"bert_tiny_op17", 2},       {"distilbert_tiny_op14", 2},
      {"bert_tiny_cls_op14", 2}, {"distilbert_base_op14", 6}, {"minilm_l6_op14", 6}};
  int checked = 0;
  for (const auto& [name, layers] : models) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    SCOPED_TRACE(name);
    ++checked;
    auto s = Session::load(generated_model_path(name));
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(fired(*s), layers);
    if (layers != 2) continue;  // the big ones: load only
    SessionOptions off;
    off.disabled_passes = {kPass};
    auto plain = Session::load(generated_model_path(name), off);
    ASSERT_TRUE(plain.ok()) << plain.error().to_string();
    EXPECT_EQ(fired(*plain), 0);
    const auto in = bert_inputs(*s, 9, {9, 5}, 7);
    auto with = executed_ops(*s, in), without = executed_ops(*plain, in);
    EXPECT_EQ(with["MultiHeadAttention"], layers);
    EXPECT_EQ(without["FusedMatMul"] - with["FusedMatMul"], 2 * layers);
  }
  if (checked == 0) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
}

double max_rel_diff(const Tensor& a, const Tensor& ref) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    diff = std::max(diff, std::fabs(double(a.data<float>()[i]) - ref.data<float>()[i]));
    scale = std::max(scale, std::fabs(double(ref.data<float>()[i])));
  }
  return diff / scale;
}

// Fused vs unfused in each precision. The fused GEMM computes every output column from the
// same operands as the unfused one (bf16: the same rounded weights and activations; int8-dynamic:
// the same per-column weight and per-row activation quantization, an exact int32 sum), so the
// only difference is the fp32 accumulation order of the wider GEMM's blocking: 1e-5 relative.
TEST(QkvFusion, FusedEqualsUnfusedInEveryPrecision) {
  struct ShapeCase {
    int64_t seq;
    std::vector<int64_t> lengths;
  };
  const std::vector<ShapeCase> shapes = {{1, {1}}, {7, {7, 4}}, {100, {100, 57, 100}}};
  int models = 0;
  for (const char* name : {"bert_tiny_op14", "distilbert_tiny_op14", "bert_tiny_cls_op14"}) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    ++models;
    for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic}) {
      SessionOptions on, off;
      on.threads = off.threads = 3;
      on.precision = off.precision = p;
      off.disabled_passes = {kPass};
      auto fused = Session::load(generated_model_path(name), on);
      auto plain = Session::load(generated_model_path(name), off);
      ASSERT_TRUE(fused.ok()) << fused.error().to_string();
      ASSERT_TRUE(plain.ok()) << plain.error().to_string();
      ASSERT_EQ(fired(*fused), 2);
      for (const auto& sc : shapes) {
        SCOPED_TRACE(std::string(name) + ", " + precision_name(p) + ", batch " + std::to_string(sc.lengths.size()) +
                     " x " + std::to_string(sc.seq));
        const auto in = bert_inputs(*plain, sc.seq, sc.lengths, 99);
        auto want = plain->run(in);
        ASSERT_TRUE(want.ok()) << want.error().to_string();
        for (int rep = 0; rep < 2; ++rep) {
          auto got = fused->run(in);
          ASSERT_TRUE(got.ok()) << got.error().to_string();
          ASSERT_EQ(got->size(), want->size());
          for (size_t k = 0; k < want->size(); ++k) {
            ASSERT_EQ((*got)[k].tensor.shape(), (*want)[k].tensor.shape());
            EXPECT_LE(max_rel_diff((*got)[k].tensor, (*want)[k].tensor), 1e-5) << "output " << k;
          }
        }
      }
    }
  }
  if (models == 0) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
}

// The MiniLM benchmark export (when present) at its real width on 2 threads: the fused
// projection (N = 1152) is cut into 6 column blocks of 192 (kernels column_block_width), the
// unfused ones (N = 384) into 64; same tolerance as above, b1 x 128 (padding: the tiny models).
TEST(QkvFusion, FusedEqualsUnfusedOnMiniLM) {
  const std::string model = generated_model_path("minilm_l6_op14");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "run scripts/make_test_models.py --bench";
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic}) {
    SessionOptions on, off;
    on.threads = off.threads = 2;
    on.precision = off.precision = p;
    off.disabled_passes = {kPass};
    auto fused = Session::load(model, on);
    auto plain = Session::load(model, off);
    ASSERT_TRUE(fused.ok()) << fused.error().to_string();
    ASSERT_TRUE(plain.ok()) << plain.error().to_string();
    ASSERT_EQ(fired(*fused), 6);
    {
      SCOPED_TRACE(precision_name(p));
      const auto in = bert_inputs(*plain, 128, {128}, 5);
      auto want = plain->run(in);
      auto got = fused->run(in);
      ASSERT_TRUE(want.ok()) << want.error().to_string();
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      ASSERT_EQ(got->size(), want->size());
      for (size_t k = 0; k < want->size(); ++k) {
        ASSERT_EQ((*got)[k].tensor.shape(), (*want)[k].tensor.shape());
        EXPECT_LE(max_rel_diff((*got)[k].tensor, (*want)[k].tensor), 1e-5) << "output " << k;
      }
    }
  }
}

// ---- the pass on hand-built graphs ----

namespace gp = graph::passes;

graph::Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  graph::Node n;
  n.name = out[0] + "_node";
  n.op_type = op;
  n.domain = "glassbox";
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

graph::Attribute ints(const char* name, std::vector<int64_t> v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

graph::ValueInfo vi(const std::string& name) {
  graph::ValueInfo v;
  v.name = name;
  return v;
}

void add_init(graph::Graph& g, const std::string& name, Tensor t) { g.initializers[name] = std::move(t); }

std::vector<float> iota_floats(int64_t n, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

constexpr int64_t kK = 4, kH = 2, kD = 3, kN = kH * kD;

// x -> FusedMatMul(x, W*, b*) x3 -> MultiHeadAttention(q, k, v, mask) -> y
graph::Graph float_attention() {
  graph::Graph g;
  g.inputs.push_back(vi("x"));
  g.inputs.push_back(vi("x2"));
  g.inputs.push_back(vi("mask"));
  g.outputs.push_back(vi("y"));
  const char* p[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string s = p[i];
    add_init(g, "W" + s, float_tensor({kK, kN}, iota_floats(kK * kN, 100.f * i)));
    add_init(g, "b" + s, float_tensor({kN}, iota_floats(kN, 10.f * i)));
    g.nodes.push_back(node("FusedMatMul", {"x", "W" + s, "b" + s}, {s}));
  }
  graph::Node mha = node("MultiHeadAttention", {"q", "k", "v", "mask"}, {"y"});
  for (const char* a : {"q_shape", "k_shape", "v_shape"}) mha.attributes[a] = ints(a, {0, 0, kH, kD});
  g.nodes.push_back(mha);
  return g;
}

int run_pass(graph::Graph& g) {
  gp::PassContext ctx;
  EXPECT_TRUE(gp::qkv_projection_fusion(g, ctx, kPass).ok());
  return static_cast<int>(ctx.log.size());
}

const graph::Node* find_op(const graph::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

TEST(QkvFusion, PassFusesSharedInputConstantWeights) {
  graph::Graph g = float_attention();
  ASSERT_EQ(run_pass(g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  const graph::Node& p = g.nodes[0];
  const graph::Node* mha = find_op(g, "MultiHeadAttention");
  ASSERT_TRUE(mha);
  EXPECT_EQ(mha->inputs, (std::vector<std::string>{p.outputs[0], "", "", "mask"}));
  ASSERT_TRUE(mha->attr("packed_qkv"));
  EXPECT_EQ(mha->attr("packed_qkv")->i, 1);
  EXPECT_EQ(p.inputs[0], "x");
  EXPECT_EQ(g.initializers.size(), 2u);  // the six it replaced are dropped
  const Tensor& w = g.initializers.at(p.inputs[1]);
  const Tensor& b = g.initializers.at(p.inputs[2]);
  ASSERT_EQ(w.shape(), (Shape{kK, 3 * kN}));
  ASSERT_EQ(b.shape(), (Shape{3 * kN}));
  for (int64_t r = 0; r < kK; ++r)
    for (int64_t c = 0; c < 3 * kN; ++c)  // column c of part c / kN is W*[r, c % kN] = 100 * part + r * kN + c % kN
      EXPECT_EQ(w.data<float>()[r * 3 * kN + c], 100.f * static_cast<float>(c / kN) + static_cast<float>(r * kN + c % kN));
  for (int64_t c = 0; c < 3 * kN; ++c) EXPECT_EQ(b.data<float>()[c], 10.f * static_cast<float>(c / kN) + static_cast<float>(c % kN));
}

TEST(QkvFusion, PassLeavesWhatItMayNotFuse) {
  struct Case {
    const char* why;
    void (*change)(graph::Graph&);
  };
  const Case cases[] = {
      {"different inputs", [](graph::Graph& g) { g.nodes[2].inputs[0] = "x2"; }},
      {"weights not constant", [](graph::Graph& g) { g.initializers.erase("Wk"); g.inputs.push_back(vi("Wk")); }},
      {"bias not constant", [](graph::Graph& g) { g.initializers.erase("bv"); g.inputs.push_back(vi("bv")); }},
      {"Q read elsewhere", [](graph::Graph& g) { g.outputs.push_back(vi("q")); }},
      {"activation", [](graph::Graph& g) {
         graph::Attribute a;
         a.name = "activation";
         a.type = graph::AttrType::kString;
         a.s = "gelu_erf";
         g.nodes[1].attributes["activation"] = a;
       }},
      {"residual", [](graph::Graph& g) { g.nodes[0].inputs.push_back("x"); }},
      {"width not heads x head_dim", [](graph::Graph& g) {
         for (const char* a : {"q_shape", "k_shape", "v_shape"}) g.nodes[3].attributes[a] = ints(a, {0, 0, 3, 3});
       }},
      {"same projection twice", [](graph::Graph& g) { g.nodes[3].inputs[1] = "q"; }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    graph::Graph g = float_attention();
    c.change(g);
    const size_t nodes = g.nodes.size(), inits = g.initializers.size();
    EXPECT_EQ(run_pass(g), 0);
    EXPECT_EQ(g.nodes.size(), nodes);
    EXPECT_EQ(g.initializers.size(), inits);
    EXPECT_FALSE(find_op(g, "MultiHeadAttention")->attr("packed_qkv"));
  }
}

// xq, xs, xz -> MatMulIntegerToFloat(xq, B*, xs, s*, xz, z*, b*) x3 -> MultiHeadAttention
graph::Graph quantized_attention(bool per_column_q) {
  graph::Graph g;
  for (const char* in : {"xq", "xs", "xz", "xs2", "mask"}) g.inputs.push_back(vi(in));
  g.outputs.push_back(vi("y"));
  const char* p[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string s = p[i];
    std::vector<int8_t> w(static_cast<size_t>(kK * kN));
    for (size_t j = 0; j < w.size(); ++j) w[j] = static_cast<int8_t>(10 * i + static_cast<int>(j % 9));
    add_init(g, "B" + s, make_tensor<int8_t>(DataType::kInt8, {kK, kN}, w));
    if (i == 0 && per_column_q) {
      add_init(g, "s" + s, float_tensor({kN}, iota_floats(kN, 1.f)));
      add_init(g, "z" + s, make_tensor<int8_t>(DataType::kInt8, {kN}, std::vector<int8_t>{1, 2, 3, 4, 5, 6}));
    } else {
      add_init(g, "s" + s, float_tensor({}, {0.5f + static_cast<float>(i)}));
      add_init(g, "z" + s, make_tensor<int8_t>(DataType::kInt8, {}, std::vector<int8_t>{static_cast<int8_t>(-i)}));
    }
    add_init(g, "b" + s, float_tensor({kN}, iota_floats(kN, 10.f * i)));
    g.nodes.push_back(node("MatMulIntegerToFloat", {"xq", "B" + s, "xs", "s" + s, "xz", "z" + s, "b" + s}, {s}));
  }
  graph::Node mha = node("MultiHeadAttention", {"q", "k", "v", "mask"}, {"y"});
  for (const char* a : {"q_shape", "k_shape", "v_shape"}) mha.attributes[a] = ints(a, {1, 0, kH, kD});
  g.nodes.push_back(mha);
  return g;
}

TEST(QkvFusion, PassConcatenatesQuantizedScalesAndZeroPoints) {
  graph::Graph g = quantized_attention(true);
  ASSERT_EQ(run_pass(g), 1);
  const graph::Node& p = g.nodes[0];
  ASSERT_EQ(p.op_type, "MatMulIntegerToFloat");
  EXPECT_EQ(p.inputs[0], "xq");
  EXPECT_EQ(p.inputs[2], "xs");
  EXPECT_EQ(p.inputs[4], "xz");
  EXPECT_EQ(g.initializers.at(p.inputs[1]).shape(), (Shape{kK, 3 * kN}));
  const Tensor& s = g.initializers.at(p.inputs[3]);
  const Tensor& z = g.initializers.at(p.inputs[5]);
  ASSERT_EQ(s.shape(), (Shape{3 * kN}));
  ASSERT_EQ(z.shape(), (Shape{3 * kN}));
  EXPECT_EQ(s.dtype(), DataType::kFloat32);
  EXPECT_EQ(z.dtype(), DataType::kInt8);
  for (int64_t c = 0; c < 3 * kN; ++c) {
    const int64_t part = c / kN, j = c % kN;
    EXPECT_EQ(s.data<float>()[c], part == 0 ? 1.f + static_cast<float>(j) : 0.5f + static_cast<float>(part));
    EXPECT_EQ(z.data<int8_t>()[c], part == 0 ? static_cast<int8_t>(j + 1) : static_cast<int8_t>(-part));
  }
  EXPECT_EQ(find_op(g, "MultiHeadAttention")->inputs[0], p.outputs[0]);
}

TEST(QkvFusion, PassLeavesQuantizedProjectionsWithOwnActivationScale) {
  graph::Graph g = quantized_attention(false);
  g.nodes[1].inputs[2] = "xs2";  // K quantized with another scale: not the same u8 input
  EXPECT_EQ(run_pass(g), 0);
  graph::Graph h = quantized_attention(false);
  h.nodes[2].inputs.resize(6);  // V without bias, Q and K with: not concatenated
  EXPECT_EQ(run_pass(h), 0);
}

}  // namespace
}  // namespace glassbox::rt_test
