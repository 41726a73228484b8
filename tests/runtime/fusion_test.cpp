// Fusion passes and kernel variants on the torch.onnx-exported BERT-shaped test
// models (scripts/make_test_models.py): opt level 2, and level 2 with each pass or
// variant switched off, must match level 0 on awkward shapes (one token, odd
// lengths, padding masks, batch > 1, more than 256 rows); and on the opset-14
// export every fusion must actually fire, so a pattern that stops matching fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "glassbox/session.h"
#include "bert_inputs.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

double max_rel_diff(const Tensor& a, const Tensor& ref) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    diff = std::max(diff, std::fabs(double(a.data<float>()[i]) - ref.data<float>()[i]));
    scale = std::max(scale, std::fabs(double(ref.data<float>()[i])));
  }
  return diff / scale;
}

struct Variant {
  std::string label;
  std::vector<std::string> disabled;
};

TEST(Fusion, EveryPassAndVariantMatchesLevelZeroOnAwkwardShapes) {
  const std::vector<Variant> variants = {{"level 2", {}},
                                         {"no gelu_fusion", {"gelu_fusion"}},
                                         {"no matmul_epilogue_fusion", {"matmul_epilogue_fusion"}},
                                         {"no layer_norm_fusion", {"layer_norm_fusion"}},
                                         {"no attention_softmax_fusion", {"attention_softmax_fusion"}},
                                         {"no attention_fusion", {"attention_fusion"}},
                                         {"no decoder_attention_fusion", {"decoder_attention_fusion"}},
                                         {"no qkv_projection_fusion", {"qkv_projection_fusion"}},
                                         {"no packed_weights", {"packed_weights"}}};
  struct ShapeCase {
    int64_t seq;
    std::vector<int64_t> lengths;  // one per sequence of the batch
  };
  const std::vector<ShapeCase> shapes = {{1, {1}}, {7, {7, 4}}, {13, {13, 1, 9}}, {100, {100, 57, 100}}};
  int models = 0;
  for (const char* name : {"bert_tiny_op13", "bert_tiny_op14", "bert_tiny_op17", "distilbert_tiny_op14", "bert_tiny_cls_op14"}) {
    if (!std::filesystem::exists(generated_model_path(name))) continue;
    ++models;
    SessionOptions o0;
    o0.opt_level = 0;
    o0.threads = 2;
    auto ref_session = Session::load(generated_model_path(name), o0);
    ASSERT_TRUE(ref_session.ok()) << ref_session.error().to_string();
    for (const auto& v : variants) {
      SessionOptions o;
      o.threads = 3;
      o.disabled_passes = v.disabled;
      auto s = Session::load(generated_model_path(name), o);
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      for (const auto& sc : shapes) {
        SCOPED_TRACE(std::string(name) + ", " + v.label + ", batch " + std::to_string(sc.lengths.size()) + " x " + std::to_string(sc.seq));
        auto in = bert_inputs(*ref_session, sc.seq, sc.lengths, 12345);
        auto want = ref_session->run(in);
        ASSERT_TRUE(want.ok()) << want.error().to_string();
        for (int rep = 0; rep < 2; ++rep) {  // second run: planned arena, packed weights reused
          auto got = s->run(in);
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

TEST(Fusion, PatternsOfTheOpset14ExportAllFire) {
  if (!std::filesystem::exists(generated_model_path("bert_tiny_op14"))) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  auto s = Session::load(generated_model_path("bert_tiny_op14"));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  std::map<std::string, int> fired;
  for (const auto& e : s->pass_log()) fired[e.pass]++;
  // 2 layers: 2 GELUs; q/k/v/out/up/down linear layers = 12 fused MatMuls; embedding + 2 per layer = 5 LayerNorms.
  EXPECT_EQ(fired["gelu_fusion"], 2);
  EXPECT_EQ(fired["matmul_epilogue_fusion"], 12);
  EXPECT_EQ(fired["layer_norm_fusion"], 5);
  EXPECT_EQ(fired["attention_softmax_fusion"], 2);
  EXPECT_EQ(fired["attention_fusion"], 2);
  EXPECT_EQ(fired["qkv_projection_fusion"], 2);
  SessionOptions off;
  off.disabled_passes = {"gelu_fusion", "matmul_epilogue_fusion", "layer_norm_fusion", "attention_softmax_fusion",
                         "attention_fusion", "qkv_projection_fusion"};
  auto plain = Session::load(generated_model_path("bert_tiny_op14"), off);
  ASSERT_TRUE(plain.ok());
  EXPECT_LT(s->node_count() + 50, plain->node_count());
}

// The graph a run executes (specialized to its input shapes) has one MultiHeadAttention per
// layer and no ScaledMaskedSoftmax left; none with attention_fusion off.
TEST(Fusion, AttentionFusionReachesTheExecutedGraph) {
  for (const char* name : {"bert_tiny_op14", "distilbert_tiny_op14", "bert_tiny_op17"}) {
    if (!std::filesystem::exists(generated_model_path(name))) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
    SCOPED_TRACE(name);
    for (bool enabled : {true, false}) {
      SessionOptions o;
      if (!enabled) o.disabled_passes = {"attention_fusion"};
      auto s = Session::load(generated_model_path(name), o);
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      std::map<std::string, int> ops;
      auto out = s->run_observed(bert_inputs(*s, 9, {9, 5}, 7), [&](const NodeEvent& e) {
        ops[e.op_type]++;
        return Status{};
      });
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      EXPECT_EQ(ops["MultiHeadAttention"], enabled ? 2 : 0);  // 2 layers
      EXPECT_EQ(ops["ScaledMaskedSoftmax"], enabled ? 0 : 2);
    }
  }
}

}  // namespace
}  // namespace glassbox::rt_test
