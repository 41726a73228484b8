// SessionOptions::precision in `glassbox explain` (row, config file, flag) and the
// `glassbox accuracy` evidence: its metrics on hand-computed tensors, its thresholds,
// and the CLI on the tiny BERT (a model file) and the langid model directory (texts).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "diag/accuracy.h"
#include "diag/explain.h"
#include "model_builder.h"

namespace glassbox::testing {
namespace {


Tensor row(std::vector<float> v) {
  Tensor t = Tensor::allocate(DataType::kFloat32, {1, static_cast<int64_t>(v.size())}).value();
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

const std::string kTinyBert = std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/generated/bert_tiny_op17.onnx";
const std::string kLangId = std::string(GLASSBOX_SOURCE_DIR) + "/models/langid";

TEST(PrecisionExplain, RowDefaultFileAndBadValue) {
  diag::EffectiveOptions o;
  bool found = false;
  for (const auto& r : diag::explain_options(o))
    if (r.component == "session" && r.name == "precision") {
      found = true;
      EXPECT_EQ(r.value, "fp32");
      EXPECT_EQ(r.source, "default");
      EXPECT_NE(r.reason.find("exported model"), std::string::npos);
      EXPECT_NE(r.risk.find("glassbox accuracy"), std::string::npos);
    }
  EXPECT_TRUE(found);
  ASSERT_TRUE(diag::apply_config(nlohmann::json::parse(R"({"session":{"precision":"bf16"}})"), o).ok());
  EXPECT_EQ(o.session.precision, Precision::kBf16);
  for (const auto& r : diag::explain_options(o))
    if (r.name == "precision") {
      EXPECT_EQ(r.value, "bf16");
      EXPECT_EQ(r.source, "file");
    }
  auto bad = diag::apply_config(nlohmann::json::parse(R"({"session":{"precision":"fp16"}})"), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("fp16"), std::string::npos);
}

// Numbers worked by hand: ref [1, 2, 3, 4] vs [1, 2, 3, 4.04]: max |d| / max |ref| = 0.04 / 4,
// sum |d| / sum |ref| = 0.04 / 10; top-1 (index 3) agrees. [2, 1] vs [1, 2] flips.
TEST(AccuracyMetrics, HandComputedValues) {
  diag::AccuracyReport r;
  diag::OutputAccuracy o;
  o.name = "logits";
  o.classifier = true;
  diag::accumulate_output(o, row({1, 2, 3, 4}), row({1, 2, 3, 4.04f}), 0);
  EXPECT_NEAR(o.max_rel_error, 0.01, 1e-6);
  EXPECT_EQ(o.top1_agree, 1);
  diag::accumulate_output(o, row({2, 1}), row({1, 2}), 7);
  EXPECT_NEAR(o.max_rel_error, 0.5, 1e-9);
  EXPECT_EQ(o.top1_rows, 2);
  EXPECT_EQ(o.top1_agree, 1);
  ASSERT_EQ(o.flipped.size(), 1u);
  EXPECT_EQ(o.flipped[0], 7);
  r.outputs.push_back(o);
  diag::finish_report(r);
  EXPECT_NEAR(r.outputs[0].mean_rel_error, (0.04 + 2.0) / (10.0 + 3.0), 1e-6);
  // 0.5 > 2e-2 and 1/2 < 0.99: two failures, each naming the output.
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_NE(r.failures[0].find("'logits'"), std::string::npos);
  // Embeddings: cosine of orthogonal vectors is 0 < 0.999.
  diag::AccuracyReport e;
  diag::OutputAccuracy v;
  v.name = "embedding";
  diag::accumulate_output(v, row({1, 0}), row({0, 1}), 0);
  EXPECT_NEAR(v.min_cosine, 0.0, 1e-12);
  e.outputs.push_back(v);
  diag::finish_report(e);
  bool cosine_failure = false;
  for (const auto& f : e.failures) cosine_failure |= f.find("cosine") != std::string::npos;
  EXPECT_TRUE(cosine_failure);
}

TEST(AccuracyCli, ModelFilePassesAndFailsLoudlyBelowThreshold) {
  if (!std::filesystem::exists(kTinyBert)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  const std::string shapes = " --shape input_ids=1x16 --shape attention_mask=1x16 --shape token_type_ids=1x16 --samples 2 --threads 2";
  auto ok = run_cli("accuracy " + kTinyBert + " --precision bf16" + shapes);
  EXPECT_EQ(ok.rc, 0) << ok.out;
  EXPECT_NE(ok.out.find("ops in bf16: 9"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("output 'last_hidden_state' (2 inputs)"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("first node that differs (first input): node '"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("PASS"), std::string::npos) << ok.out;
  auto strict = run_cli("accuracy " + kTinyBert + " --precision bf16 --max-rel-error 1e-9" + shapes);
  EXPECT_EQ(strict.rc, 3) << strict.out;
  EXPECT_NE(strict.out.find("FAIL: output 'last_hidden_state': max relative error"), std::string::npos) << strict.out;
  auto json = run_cli("accuracy " + kTinyBert + " --json" + shapes);
  ASSERT_EQ(json.rc, 0) << json.out;
  auto j = nlohmann::json::parse(json.out.substr(json.out.find('{')));
  EXPECT_EQ(j["schema"], "glassbox.accuracy/1");
  EXPECT_EQ(j["candidate"], "bf16");
  EXPECT_EQ(j["lower_precision_ops"].size(), 9u);  // 2 layers x (Q/K/V fused, out, up, down) + pooler
  EXPECT_TRUE(j["pass"].get<bool>());
  auto same = run_cli("accuracy " + kTinyBert + " --precision fp32" + shapes);
  EXPECT_NE(same.rc, 0);
  EXPECT_NE(same.out.find("the reference itself"), std::string::npos) << same.out;
}

// int8-dynamic on the tiny BERT: the report is printed with its 9 int8 ops (the linear
// layers, Q/K/V as one product per layer; attention products, LayerNorm, Softmax stay fp32) and the first departing node.
TEST(AccuracyCli, Int8DynamicReport) {
  if (!std::filesystem::exists(kTinyBert)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  const std::string shapes = " --shape input_ids=1x16 --shape attention_mask=1x16 --shape token_type_ids=1x16 --samples 2 --threads 2";
  auto r = run_cli("accuracy " + kTinyBert + " --precision int8-dynamic" + shapes);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("accuracy of int8-dynamic against fp32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ops in int8-dynamic: 9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output 'last_hidden_state' (2 inputs): max rel error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first node that differs (first input): node '"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST(AccuracyCli, ModelDirectoryOnTexts) {
  TempDir dir;
  std::ifstream in(kLangId + "/sanity.tsv");
  std::ofstream texts(dir.file("texts.txt"));
  std::string line;
  int n = 0;
  while (std::getline(in, line) && n < 40) {
    if (line.empty() || line[0] == '#') continue;
    texts << line.substr(line.find('\t') + 1) << "\n";
    ++n;
  }
  texts.close();
  auto r = run_cli("accuracy " + kLangId + " --precision bf16 --threads 2 --texts " + dir.file("texts.txt"));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("inputs: " + std::to_string(n) + " texts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-1 agreement " + std::to_string(n) + "/" + std::to_string(n)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ops in bf16: 1 ("), std::string::npos) << r.out;  // the classifier's Gemm; the convolutions stay fp32
  auto none = run_cli("accuracy " + kLangId + " --precision bf16");
  EXPECT_NE(none.rc, 0);
  EXPECT_NE(none.out.find("--texts"), std::string::npos) << none.out;
}

TEST(PrecisionCli, ExplainRunClassify) {
  if (!std::filesystem::exists(kTinyBert)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  auto e = run_cli("explain " + kTinyBert + " --precision bf16");
  ASSERT_EQ(e.rc, 0) << e.out;
  EXPECT_NE(e.out.find("precision = bf16  (flag; default fp32)"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("(Gemm): bf16: weights"), std::string::npos) << e.out;
  auto plain = run_cli("explain " + kTinyBert);
  EXPECT_EQ(plain.out.find("bf16: weights"), std::string::npos) << plain.out;
  auto bad = run_cli("run " + kTinyBert + " --precision fp16");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("fp16"), std::string::npos) << bad.out;
  auto int8 = run_cli("bench " + kTinyBert + " --precision int8-dynamic --shape input_ids=1x8 --shape attention_mask=1x8 "
                      "--shape token_type_ids=1x8 --repeat 1 --threads 2");
  EXPECT_EQ(int8.rc, 0) << int8.out;
  auto e8 = run_cli("explain " + kTinyBert + " --precision int8-dynamic");
  ASSERT_EQ(e8.rc, 0) << e8.out;
  EXPECT_NE(e8.out.find("precision = int8-dynamic  (flag; default fp32)"), std::string::npos) << e8.out;
  EXPECT_NE(e8.out.find("(Gemm): int8-dynamic: weights"), std::string::npos) << e8.out;
  EXPECT_EQ(e8.out.find("bf16: weights"), std::string::npos) << e8.out;
  auto dir = run_cli("explain " + kLangId + " --precision bf16");
  ASSERT_EQ(dir.rc, 0) << dir.out;
  EXPECT_NE(dir.out.find("precision = bf16  [flag --precision]"), std::string::npos) << dir.out;
  auto c = run_cli("classify " + kLangId + " --precision bf16 --threads 2 \"Guten Morgen, wie geht es dir?\"");
  ASSERT_EQ(c.rc, 0) << c.out;
  EXPECT_NE(c.out.find("\"label\":\"de\""), std::string::npos) << c.out;
}

}  // namespace
}  // namespace glassbox::testing
