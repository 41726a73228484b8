// `glassbox probe` on a model directory with a tokenizer: texts around the length limit and
// hostile texts go through the real pipeline (models/langid, the embedded default model).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "diag/probe.h"
#include "glassbox/pipeline.h"

using namespace glassbox;
namespace fs = std::filesystem;

namespace {

const diag::ProbeCase* find_case(const diag::ProbeReport& r, const std::string& prefix) {
  for (const auto& c : r.cases)
    if (c.name.rfind(prefix, 0) == 0) return &c;
  return nullptr;
}

TEST(ProbeText, DefaultModelPassesEveryTextCase) {
  auto r = diag::probe_model(default_model_dir(), SessionOptions{}, diag::ProbeOptions{});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->ok()) << diag::probe_to_text(*r);
  const int64_t max = r->max_length;
  ASSERT_GT(max, 2);
  for (int64_t n : {max - 1, max, max + 1, max + 3}) {
    const auto* c = find_case(*r, "text of " + std::to_string(n) + " tokens");
    ASSERT_NE(c, nullptr) << "no case for " << n << " tokens\n" << diag::probe_to_text(*r);
    EXPECT_EQ(c->status, diag::ProbeStatus::kPass) << c->detail;
    // Overlong: refused (no truncation policy) or truncated to the limit with the count reported.
    if (n > max)
      EXPECT_TRUE(c->detail.find("refused cleanly") != std::string::npos ||
                  c->detail.find("truncated as declared: " + std::to_string(n - max) + " tokens dropped") != std::string::npos)
          << c->detail;
    else EXPECT_NE(c->detail.find(std::to_string(n) + " tokens"), std::string::npos) << c->detail;
  }
  for (const char* name : {"empty string", "whitespace only", "NUL and control characters", "combining marks",
                           "emoji ZWJ sequences", "invalid UTF-8", "1 MB input", "unknown-token rate"}) {
    const auto* c = find_case(*r, name);
    ASSERT_NE(c, nullptr) << name << "\n" << diag::probe_to_text(*r);
    EXPECT_NE(c->status, diag::ProbeStatus::kFail) << name << ": " << c->detail;
  }
  EXPECT_NE(find_case(*r, "invalid UTF-8")->detail.find("refused cleanly"), std::string::npos);
}

TEST(ProbeText, MaxLengthBeyondThePositionTableIsCaught) {
  // A directory that declares max_length 200 for a model with 128 positions (the torch.onnx
  // export bert_tiny_cls_op14 with a small word-level tokenizer): texts that fit the declared
  // limit break inside the graph, and probe must say so. (The default model reads bytes with
  // convolutions and has no position table, so it cannot serve here.)
  const fs::path model = fs::path(GLASSBOX_SOURCE_DIR) / "tests/data/generated/bert_tiny_cls_op14.onnx";
  if (!fs::exists(model)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  const fs::path dir = fs::temp_directory_path() / ("glassbox_probe_text_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(model, dir / "model.onnx");
  nlohmann::json vocab = {{"[PAD]", 0}, {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}};
  for (const char* w : {"a", "the", "x", "1", "."}) vocab[w] = vocab.size();
  nlohmann::json added = nlohmann::json::array();
  for (const char* t : {"[PAD]", "[UNK]", "[CLS]", "[SEP]"})
    added.push_back({{"id", vocab[t]}, {"content", t}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                     {"normalized", false}, {"special", true}});
  const nlohmann::json tokenizer = {
      {"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added},
      {"normalizer", nullptr}, {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
      {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                    {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
        {"pair", {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                  {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}},
                  {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 1}}}}}},
        {"special_tokens",
         {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}, {"tokens", {"[CLS]"}}}},
          {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}, {"tokens", {"[SEP]"}}}}}}}},
      {"decoder", nullptr}};
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  std::ofstream(dir / "config.json") << R"({"id2label": {"0": "a", "1": "b", "2": "c"}, "max_position_embeddings": 128})";
  std::ofstream(dir / "glassbox.json") << R"({"task": "classify", "max_length": 200})";
  diag::ProbeOptions po;
  auto r = diag::probe_model(dir.string(), SessionOptions{}, po);
  fs::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(r->ok()) << diag::probe_to_text(*r);
  bool named = false;
  for (const auto& c : r->cases)
    if (c.status == diag::ProbeStatus::kFail &&
        (c.name.find("text of 199 tokens") != std::string::npos || c.name.find("text cases") != std::string::npos))
      named = true;
  EXPECT_TRUE(named) << diag::probe_to_text(*r);
}

TEST(ProbeText, CanBeSwitchedOff) {
  diag::ProbeOptions po;
  po.text_cases = false;
  auto r = diag::probe_model(default_model_dir(), SessionOptions{}, po);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(find_case(*r, "text of"), nullptr);
  EXPECT_EQ(find_case(*r, "empty string"), nullptr);
}

}  // namespace
