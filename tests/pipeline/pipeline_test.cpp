// Pipeline loud paths and batching invariants, on copies of the embedded model directory.
// Scores against the peers (onnxruntime-node + npm tokenizers) are in pipeline_peer_test.js.
#include "glassbox/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using glassbox::Pipeline;
using glassbox::PipelineInput;
using glassbox::PipelineOptions;

namespace {

const fs::path kLangId = fs::path(GLASSBOX_SOURCE_DIR) / "models" / "langid";

// A private copy of models/langid that a test may break.
class ModelDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("glassbox_pipeline_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* f : {"model.onnx", "tokenizer.json", "config.json", "tokenizer_config.json", "glassbox.json"})
      fs::copy_file(kLangId / f, dir_ / f);
  }
  void TearDown() override { fs::remove_all(dir_); }

  nlohmann::json read_json(const char* name) const {
    std::ifstream in(dir_ / name);
    return nlohmann::json::parse(in);
  }
  void write_json(const char* name, const nlohmann::json& j) const { std::ofstream(dir_ / name) << j.dump(2); }

  std::string load_error(const PipelineOptions& o = {}) const {
    auto p = Pipeline::load(dir_.string(), o);
    return p.ok() ? std::string("(loaded)") : p.error().to_string();
  }

  fs::path dir_;
};

std::string long_text(int words) {
  std::string t;
  for (int i = 0; i < words; ++i) t += (i % 3 == 0 ? "Morgen " : i % 3 == 1 ? "fahren " : "wir ");
  return t;
}

}  // namespace

TEST_F(ModelDir, LoadsAndScoresSumToOne) {
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const size_t n = p->decisions().labels.size();
  ASSERT_GT(n, 1u);
  auto r = p->classify({{"Hello there, how are you?", std::nullopt}}, static_cast<int>(n));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ((*r)[0].labels.size(), n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += (*r)[0].labels[i].score;
    if (i > 0) {
      EXPECT_GE((*r)[0].labels[i - 1].score, (*r)[0].labels[i].score) << "labels are not sorted by score";
    }
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST_F(ModelDir, MissingFileIsNamed) {
  for (const char* f : {"model.onnx", "tokenizer.json", "config.json"}) {
    fs::rename(dir_ / f, dir_ / "moved");
    const std::string e = load_error();
    EXPECT_NE(e.find(f), std::string::npos) << f << ": " << e;
    EXPECT_NE(e.find("missing"), std::string::npos) << e;
    fs::rename(dir_ / "moved", dir_ / f);
  }
  EXPECT_EQ(load_error(), "(loaded)");
  // optional files may be absent
  fs::remove(dir_ / "tokenizer_config.json");
  fs::remove(dir_ / "glassbox.json");
  EXPECT_EQ(load_error(), "(loaded)");
}

TEST_F(ModelDir, MissingDirectory) {
  auto p = Pipeline::load((dir_ / "nope").string());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().to_string().find("nope"), std::string::npos) << p.error().to_string();
}

TEST_F(ModelDir, EmptyTextIsAnError) {
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  for (const std::string text : {"", " ", "\t\n"}) {
    auto r = p->classify({{"fine", std::nullopt}, {text, std::nullopt}});
    ASSERT_FALSE(r.ok()) << "'" << text << "' was classified";
    const std::string e = r.error().to_string();
    EXPECT_NE(e.find("input 1"), std::string::npos) << e;
    EXPECT_TRUE(e.find("empty") != std::string::npos || e.find("whitespace") != std::string::npos) << e;
  }
}

TEST_F(ModelDir, OverlongInputWithoutPolicyStatesLengthLimitAndFlag) {
  PipelineOptions o;
  o.truncation = "none";
  auto p = Pipeline::load(dir_.string(), o);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const std::string text = long_text(300);
  glassbox::EncodeOptions eo;
  eo.truncation_from_file = false;
  auto enc = p->tokenizer().encode(text, std::nullopt, eo);
  ASSERT_TRUE(enc.ok());
  const size_t len = enc->size();
  const int64_t limit = p->decisions().max_length;
  ASSERT_GT(static_cast<int64_t>(len), limit);
  auto r = p->classify({{text, std::nullopt}});
  ASSERT_FALSE(r.ok());
  const std::string e = r.error().to_string();
  EXPECT_NE(e.find(std::to_string(len) + " tokens"), std::string::npos) << e;
  EXPECT_NE(e.find(std::to_string(limit)), std::string::npos) << e;
  EXPECT_NE(e.find("--truncation"), std::string::npos) << e;
  EXPECT_NE(e.find("glassbox.json"), std::string::npos) << e;

  // the boundary: exactly max_length tokens is accepted, one more is not. The shortest prefix
  // of "a a a ..." with max_length tokens (one character adds at most one token for both the
  // byte tokenizer of the langid model and word-level BPE).
  std::string t;
  int64_t n = 0;
  for (size_t k = 1; k <= static_cast<size_t>(4 * limit) && n != limit; ++k) {
    t.push_back(k % 2 == 1 ? 'a' : ' ');
    n = static_cast<int64_t>(p->tokenizer().encode(t, std::nullopt, eo)->size());
  }
  ASSERT_EQ(n, limit) << "no prefix of \"a a a ...\" has exactly max_length tokens";
  auto at = p->classify({{t, std::nullopt}});
  ASSERT_TRUE(at.ok()) << at.error().to_string();
  EXPECT_EQ((*at)[0].tokens, limit);
  EXPECT_EQ((*at)[0].tokens_dropped, 0);
  const std::string over = t + "a a";
  ASSERT_GT(static_cast<int64_t>(p->tokenizer().encode(over, std::nullopt, eo)->size()), limit);
  EXPECT_FALSE(p->classify({{over, std::nullopt}}).ok());
}

TEST_F(ModelDir, DeclaredTruncationReportsDroppedTokens) {
  auto j = read_json("glassbox.json");
  j["truncation"] = "longest_first";
  write_json("glassbox.json", j);
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const std::string text = long_text(300);
  glassbox::EncodeOptions eo;
  eo.truncation_from_file = false;
  const int64_t len = static_cast<int64_t>(p->tokenizer().encode(text, std::nullopt, eo)->size());
  auto r = p->classify({{text, std::nullopt}});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ((*r)[0].tokens, p->decisions().max_length);
  EXPECT_EQ((*r)[0].tokens_dropped, len - p->decisions().max_length);
}

TEST_F(ModelDir, TruncationObjectForm) {
  auto j = read_json("glassbox.json");
  j["truncation"] = {{"enabled", false}, {"strategy", "longest_first"}};
  write_json("glassbox.json", j);
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_FALSE(p->decisions().truncation.has_value());
  j["truncation"] = {{"enabled", true}, {"strategy", "longest_first"}, {"direction", "left"}};
  write_json("glassbox.json", j);
  p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  ASSERT_TRUE(p->decisions().truncation.has_value());
  EXPECT_EQ(p->decisions().truncation->direction, glassbox::Side::kLeft);
  j["truncation"] = {{"enabled", true}, {"direction", "middle"}};
  write_json("glassbox.json", j);
  EXPECT_NE(load_error().find("middle"), std::string::npos);
}

TEST_F(ModelDir, WrongFieldTypesAreErrorsNotIgnored) {
  auto j = read_json("glassbox.json");
  j["max_length"] = "128";
  write_json("glassbox.json", j);
  std::string e = load_error();
  EXPECT_NE(e.find("max_length"), std::string::npos) << e;
  EXPECT_NE(e.find("glassbox.json"), std::string::npos) << e;
  j["max_length"] = 128;
  j["truncation"] = 5;
  write_json("glassbox.json", j);
  e = load_error();
  EXPECT_NE(e.find("truncation"), std::string::npos) << e;
  j.erase("truncation");
  j["labels"] = "de";
  write_json("glassbox.json", j);
  e = load_error();
  EXPECT_NE(e.find("labels"), std::string::npos) << e;
}

TEST_F(ModelDir, AbstainBelowMarksLowConfidenceAndIsValidated) {
  auto j = read_json("glassbox.json");
  j.erase("abstain_below");
  write_json("glassbox.json", j);
  auto plain = Pipeline::load(dir_.string());
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  EXPECT_FALSE(plain->decisions().abstain_below.has_value());
  const std::vector<glassbox::PipelineInput> texts = {{"Guten Morgen, wie geht es dir? Ich hoffe, es geht dir gut.", std::nullopt},
                                                      {"ok", std::nullopt}};
  auto base = plain->classify(texts);
  ASSERT_TRUE(base.ok()) << base.error().to_string();
  EXPECT_FALSE((*base)[0].abstained || (*base)[1].abstained) << "nothing abstains without a declaration";
  // A threshold between the two texts' top scores: the confident one answers, the other abstains, and
  // both keep exactly the labels and scores they had.
  const float hi = (*base)[0].labels[0].score, lo = (*base)[1].labels[0].score;
  ASSERT_GT(hi, lo);
  j["abstain_below"] = (hi + lo) / 2;
  write_json("glassbox.json", j);
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  ASSERT_TRUE(p->decisions().abstain_below.has_value());
  auto r = p->classify(texts);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE((*r)[0].abstained);
  EXPECT_TRUE((*r)[1].abstained);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*r)[i].labels[0].label, (*base)[i].labels[0].label);
    EXPECT_EQ((*r)[i].labels[0].score, (*base)[i].labels[0].score);
  }
  bool row = false;
  for (const auto& d : p->derivations()) row = row || (d.field == "abstain_below" && d.source.find("glassbox.json") == 0);
  EXPECT_TRUE(row) << "explain shows the declared threshold and its source";
  for (double bad : {0.0, 1.0, 1.5}) {
    j["abstain_below"] = bad;
    write_json("glassbox.json", j);
    EXPECT_NE(load_error().find("abstain_below"), std::string::npos) << bad;
  }
  j["abstain_below"] = "0.5";
  write_json("glassbox.json", j);
  EXPECT_NE(load_error().find("abstain_below"), std::string::npos);
  j["abstain_below"] = 0.5;
  j["score_function"] = "none";  // logits are not probabilities
  write_json("glassbox.json", j);
  EXPECT_NE(load_error().find("probabilities"), std::string::npos);
}

TEST_F(ModelDir, LabelCountMustMatchLogits) {
  auto j = read_json("glassbox.json");
  j["labels"].erase(j["labels"].size() - 1);
  write_json("glassbox.json", j);
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  auto r = p->classify({{"hello world", std::nullopt}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("labels"), std::string::npos) << r.error().to_string();
}

TEST_F(ModelDir, TokenizerLargerThanEmbeddingTableFailsAtLoad) {
  // bert-uncased has 30522 tokens; the langid embedding table has far fewer rows
  fs::copy_file(fs::path(GLASSBOX_SOURCE_DIR) / "tests/data/tokenizer/models/bert-uncased.json",
                dir_ / "tokenizer.json", fs::copy_options::overwrite_existing);
  const std::string e = load_error();
  EXPECT_NE(e.find("embedding table"), std::string::npos) << e;
  const auto rows = read_json("config.json")["vocab_size"].get<int64_t>();
  EXPECT_NE(e.find(std::to_string(rows) + " rows"), std::string::npos) << e;
}

TEST_F(ModelDir, BatchingDoesNotChangeScores) {
  const std::vector<PipelineInput> texts = {{"Guten Morgen, wie geht es dir?", std::nullopt},
                                            {"a", std::nullopt},
                                            {long_text(20), std::nullopt},
                                            {"Où est la gare, s'il vous plaît ?", std::nullopt},
                                            {"駅はどこですか？", std::nullopt},
                                            {"Hola", std::nullopt},
                                            {"Dobré ráno", std::nullopt}};
  PipelineOptions one, many;
  one.batch_size = 1;
  many.batch_size = 5;  // mixed lengths in one batch: padding must not leak into the scores
  auto p1 = Pipeline::load(dir_.string(), one);
  auto p5 = Pipeline::load(dir_.string(), many);
  ASSERT_TRUE(p1.ok() && p5.ok());
  const int k = static_cast<int>(p1->decisions().labels.size());
  auto r1 = p1->classify(texts, k);
  auto r5 = p5->classify(texts, k);
  ASSERT_TRUE(r1.ok() && r5.ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*r1)[i].tokens, (*r5)[i].tokens);
    for (const auto& a : (*r1)[i].labels)
      for (const auto& b : (*r5)[i].labels)
        if (a.label == b.label) {
          EXPECT_NEAR(a.score, b.score, 1e-5) << "text " << i << " label " << a.label;
        }
  }
}

TEST_F(ModelDir, TaskMismatchIsAnError) {
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok());
  auto r = p->embed({{"hello", std::nullopt}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("classify"), std::string::npos) << r.error().to_string();
}

TEST_F(ModelDir, DerivationsNameTheirSource) {
  fs::remove(dir_ / "glassbox.json");
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  std::map<std::string, std::string> source;
  for (const auto& d : p->derivations()) source[d.field] = d.source;
  EXPECT_EQ(source["max_length"], "tokenizer_config.json model_max_length");
  EXPECT_EQ(source["labels"], "config.json id2label");
  EXPECT_NE(source["task"].find("logits"), std::string::npos) << source["task"];
  EXPECT_NE(source["truncation"].find("default"), std::string::npos) << source["truncation"];
  EXPECT_FALSE(p->decisions().truncation.has_value()) << "without glassbox.json nothing may be dropped";
  fs::remove(dir_ / "tokenizer_config.json");
  p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  for (const auto& d : p->derivations()) {
    if (d.field == "max_length") {
      EXPECT_EQ(d.source, "config.json max_position_embeddings");
    }
  }
}

// Batches of texts of different lengths: unpadded (probed at load, or declared) gives the
// padded batch's scores; a declared false is honoured; a wrong type is an error.
TEST_F(ModelDir, UnpaddedBatchesGiveThePaddedScores) {
  const std::vector<PipelineInput> texts = {{"Hello there, how are you today my friend?", std::nullopt},
                                            {"Bonjour", std::nullopt},
                                            {long_text(20), std::nullopt},
                                            {"Dobrý den, jak se máte?", std::nullopt},
                                            {"Hej", std::nullopt}};
  auto probed = Pipeline::load(dir_.string());
  ASSERT_TRUE(probed.ok()) << probed.error().to_string();
  EXPECT_TRUE(probed->decisions().unpadded_batches) << "the embedded model masks padding: the probe must say so";
  std::string source;
  for (const auto& d : probed->derivations())
    if (d.field == "unpadded_batches") source = d.source;
  EXPECT_NE(source.find("probe at load"), std::string::npos) << source;

  auto j = read_json("glassbox.json");
  j["unpadded_batches"] = false;
  write_json("glassbox.json", j);
  auto padded = Pipeline::load(dir_.string());
  ASSERT_TRUE(padded.ok()) << padded.error().to_string();
  EXPECT_FALSE(padded->decisions().unpadded_batches);

  const int all = static_cast<int>(probed->decisions().labels.size());
  auto a = probed->classify(texts, all);
  auto b = padded->classify(texts, all);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  ASSERT_EQ(a->size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*a)[i].tokens, (*b)[i].tokens);
    std::map<std::string, float> sb;
    for (const auto& l : (*b)[i].labels) sb[l.label] = l.score;
    for (const auto& l : (*a)[i].labels) EXPECT_NEAR(l.score, sb[l.label], 1e-4) << "text " << i << " label " << l.label;
  }

  j["unpadded_batches"] = "yes";
  write_json("glassbox.json", j);
  EXPECT_NE(load_error().find("unpadded_batches"), std::string::npos) << load_error();
}

// Text pipelines plan once for every text length and batch size (SessionOptions::unspecialized_symbols "*",
// derived, shown with its reason); a caller's own list wins. The one plan gives what a plan per shape gives.
TEST_F(ModelDir, OnePlanServesEveryTextLength) {
  auto p = Pipeline::load(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->session().options().unspecialized_symbols, std::vector<std::string>{"*"});
  bool shown = false;
  for (const auto& d : p->derivations())
    if (d.field == "unspecialized_symbols") {
      shown = true;
      EXPECT_EQ(d.value, "*");
      EXPECT_EQ(d.source.rfind("default", 0), 0u) << d.source;
      EXPECT_TRUE(d.risk.empty()) << d.risk;  // not a guess about the model: no result changes
    }
  EXPECT_TRUE(shown);
  PipelineOptions o;
  o.session.unspecialized_symbols = {"no-such-dim"};  // a plan per shape, as before the default
  auto specialized = Pipeline::load(dir_.string(), o);
  ASSERT_TRUE(specialized.ok()) << specialized.error().to_string();
  EXPECT_EQ(specialized->session().options().unspecialized_symbols, std::vector<std::string>{"no-such-dim"});
  std::vector<PipelineInput> texts;
  for (int words : {3, 40, 9, 17, 1, 60}) texts.push_back({long_text(words), std::nullopt});
  for (size_t n : {size_t{1}, size_t{3}, texts.size()}) {  // batch sizes 1, 3 and 6 over the same plan
    std::vector<PipelineInput> batch(texts.begin(), texts.begin() + static_cast<std::ptrdiff_t>(n));
    auto a = p->classify(batch, 3), b = specialized->classify(batch, 3);
    ASSERT_TRUE(a.ok() && b.ok());
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < (*a)[i].logits.size(); ++k)
        EXPECT_NEAR((*a)[i].logits[k], (*b)[i].logits[k], 1e-5f) << "text " << i << " logit " << k;
  }
}
