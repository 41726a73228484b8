// The encode output line (cli/encoding_json.h) against the nlohmann::json writer it replaced, byte for byte,
// on encodings of real tokenizer files (plain, overflow windows, padding, pairs) and on synthetic ones.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/encoding_json.h"

namespace {

using glassbox::Encoding;

// The writer `glassbox encode` used before the fast path (nlohmann::json: std::map, keys sorted).
nlohmann::json reference_json(const Encoding& e, bool with_overflow) {
  nlohmann::json j;
  j["ids"] = e.ids;
  j["type_ids"] = e.type_ids;
  j["tokens"] = e.tokens;
  nlohmann::json offs = nlohmann::json::array();
  for (auto& o : e.offsets) offs.push_back({o.first, o.second});
  j["offsets"] = offs;
  j["attention_mask"] = e.attention_mask;
  j["special_tokens_mask"] = e.special_tokens_mask;
  if (with_overflow) {
    nlohmann::json ov = nlohmann::json::array();
    for (auto& o : e.overflowing) ov.push_back(reference_json(o, false));
    j["overflowing"] = ov;
  }
  return j;
}

std::string reference_line(const Encoding& e) {
  return reference_json(e, true).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string fast_line(const Encoding& e) {
  std::string out;
  glassbox::cli::append_encoding(out, e, true);
  return out;
}

std::vector<glassbox::EncodeInput> corpus_inputs() {
  std::vector<glassbox::EncodeInput> in;
  const std::string dir = std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/tokenizer/corpus/";
  for (const char* f : {"en.txt", "de.txt", "ja.txt", "ru.txt", "zh_CN.txt"}) {
    std::ifstream s(dir + f);
    int n = 0;
    for (std::string l; std::getline(s, l) && n < 40;)
      if (!l.empty()) in.push_back({l, n++ % 5 == 0 ? std::optional<std::string>("a pair text") : std::nullopt});
  }
  std::ifstream edge(dir + "edge.jsonl");
  for (std::string l; std::getline(edge, l);) {
    if (l.empty()) continue;
    auto j = nlohmann::json::parse(l);
    in.push_back({j["text"], j.contains("pair") ? std::optional<std::string>(j["pair"]) : std::nullopt});
  }
  return in;
}

TEST(EncodingJson, RealEncodingsEqualNlohmannBytes) {
  const auto inputs = corpus_inputs();
  ASSERT_GT(inputs.size(), 150u);
  for (const char* file : {"roberta-bpe.json", "bert-uncased.json", "unigram.json"}) {
    auto tk = glassbox::Tokenizer::from_file(std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/tokenizer/models/" + file);
    ASSERT_TRUE(tk.ok()) << tk.error().to_string();
    glassbox::EncodeOptions plain, overflow, padded;
    overflow.truncation_from_file = false;
    overflow.truncation = glassbox::TruncationPolicy{16, glassbox::TruncationStrategy::kLongestFirst,
                                                     glassbox::Side::kRight, 4};
    padded.padding_from_file = false;
    padded.padding = glassbox::PaddingPolicy{};
    padded.padding->pad_to_multiple_of = 8;
    int with_windows = 0;
    for (const auto* opt : {&plain, &overflow, &padded}) {
      auto r = tk->encode_batch(inputs, *opt, 1);
      ASSERT_TRUE(r.ok()) << file << ": " << r.error().to_string();
      for (std::size_t i = 0; i < r->size(); ++i) {
        with_windows += !(*r)[i].overflowing.empty();
        ASSERT_EQ(fast_line((*r)[i]), reference_line((*r)[i])) << file << " input " << i;
      }
    }
    EXPECT_GT(with_windows, 20) << file << ": the overflow case must produce windows";
  }
}

TEST(EncodingJson, SyntheticEncodingsEqualNlohmannBytes) {
  Encoding empty;
  EXPECT_EQ(fast_line(empty), reference_line(empty));
  Encoding e;
  e.ids = {0, 4294967295u};
  e.type_ids = {0, 1};
  e.tokens = {"\"quoted\\\x01\xE2\x80\xA8", "bad \xED\xA0\x80 \xC0 \xF0\x9F"};
  e.offsets = {{0, 3}, {3, 18446744073709551615ull}};
  e.attention_mask = {1, 0};
  e.special_tokens_mask = {0, 1};
  e.overflowing = {e, empty};
  EXPECT_EQ(fast_line(e), reference_line(e));
}

}  // namespace
