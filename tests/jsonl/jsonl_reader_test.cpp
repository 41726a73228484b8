// The fast input-line parser against nlohmann::json::parse (the general parser it hands lines back to), and
// the line reader against std::getline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/jsonl.h"

namespace {

using glassbox::jsonl::LineKind;
using glassbox::jsonl::TextLine;

// What the general parser makes of a line: nullopt when it would not give {text, pair?} strings.
std::optional<TextLine> general(const std::string& line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string()) return std::nullopt;
  TextLine t;
  t.text = j["text"].get<std::string>();
  if (j.contains("pair") && j["pair"].is_string()) t.pair = j["pair"].get<std::string>();
  else if (j.contains("pair") && !j["pair"].is_null()) return std::nullopt;
  return t;
}

// The property every line must satisfy: a line the fast parser takes decodes exactly as nlohmann decodes it.
void expect_agrees(const std::string& line, const char* why) {
  TextLine fast;
  const LineKind k = glassbox::jsonl::parse_text_line(line, fast);
  if (k == LineKind::kBlank) {
    EXPECT_TRUE(line.empty()) << why;
    return;
  }
  if (k == LineKind::kGeneral) return;  // nlohmann decides, as before
  auto want = general(line);
  ASSERT_TRUE(want.has_value()) << why << ": fast parser took a line nlohmann rejects: " << nlohmann::json(line).dump();
  EXPECT_EQ(fast.text, want->text) << why << ": " << nlohmann::json(line).dump();
  EXPECT_EQ(fast.pair, want->pair) << why << ": " << nlohmann::json(line).dump();
}

LineKind kind(const std::string& line) {
  TextLine t;
  return glassbox::jsonl::parse_text_line(line, t);
}

TEST(JsonlReader, CommonShapesTakeTheFastPath) {
  const std::vector<std::string> fast = {
      R"({"text": "Hello world!"})", R"({"text":"a","pair":"b"})", R"(  { "pair" : null , "text" : "x" }  )",
      "{\"text\": \"tab\\tnl\\n quote\\\" bs\\\\ slash\\/ \\b\\f\\r\"}\r",
      R"({"text": "\u00e9\u6f22\ud83d\ude00 \u0000 \u2028"})", "{\"text\": \"raw \xC3\xA9 \xF0\x9F\x98\x80 \x7F\"}",
      R"({"text": ""})",
  };
  for (const auto& l : fast) {
    EXPECT_EQ(kind(l), LineKind::kParsed) << l;
    expect_agrees(l, "common shape");
  }
  TextLine t;
  ASSERT_EQ(glassbox::jsonl::parse_text_line(R"({"text": "\u00e9\ud83d\ude00", "pair": "p"})", t), LineKind::kParsed);
  EXPECT_EQ(t.text, "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(t.pair, std::optional<std::string>("p"));
}

TEST(JsonlReader, EverythingElseGoesToTheGeneralParser) {
  const std::vector<std::string> general_lines = {
      " ", "\r", "[]", "{}", R"({"pair": "p"})", R"({"text": 1})", R"({"text": "a", "pair": 2})",
      R"({"text": "a", "text": "b"})", R"({"text": "a", "id": 7})", R"({"te\u0078t": "a"})",
      "\xEF\xBB\xBF{\"text\": \"bom\"}", R"({"text": "lone \ud800"})", R"({"text": "lone \udc00 low"})",
      R"({"text": "bad pair \ud800\u0041"})", R"({"text": "bad \x"})", R"({"text": "short \u12"})",
      "{\"text\": \"raw\x01control\"}", "{\"text\": \"cesu \xED\xA0\x80\"}", "{\"text\": \"overlong \xC0\xAF\"}",
      "{\"text\": \"cut \xE2\x82\"}", R"({"text": "a"} x)", R"({"text": "a",})", R"({"text": "a")", R"({"text": "a)",
      R"({"text" "a"})", R"({"text": "a", "pair": nul})", R"({"text": "a", "pair": nullx})",
  };
  for (const auto& l : general_lines) {
    EXPECT_EQ(kind(l), LineKind::kGeneral) << nlohmann::json(l).dump();
    expect_agrees(l, "general");
  }
}

// Valid lines from nlohmann's own writer (random strings, both escaping styles), then each mutated at one
// byte: whatever the fast parser takes must decode as nlohmann decodes it. Fixed seed.
TEST(JsonlReader, RandomLinesAgreeWithNlohmann) {
  const std::vector<std::string> pieces = {"a", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x7F", "\xC3\xA9",
                                           "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF", "{", "}", ":", ","};
  const std::string mutations = "\"\\{}:,u0dD8\x01\x80\xC3\xED\xF0 n";
  std::mt19937 rng(4217);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1), len(0, 8), mut(0, mutations.size() - 1);
  int parsed = 0;
  for (int n = 0; n < 4000; ++n) {
    std::string text, pair;
    for (std::size_t k = len(rng); k > 0; --k) text += pieces[pick(rng)];
    for (std::size_t k = len(rng); k > 0; --k) pair += pieces[pick(rng)];
    nlohmann::json j{{"text", text}};
    if (n % 3 == 0) j["pair"] = pair;
    if (n % 7 == 0) j["pair"] = nullptr;
    const std::string line = j.dump(n % 2 ? -1 : 0, ' ', n % 4 == 1);  // compact or newlines, ASCII-escaped or not
    std::string one_line;
    for (char c : line) one_line += c == '\n' ? ' ' : c;
    TextLine t;
    if (glassbox::jsonl::parse_text_line(one_line, t) == LineKind::kParsed) ++parsed;
    expect_agrees(one_line, "valid");
    std::string m = one_line;
    m[std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng)] = mutations[mut(rng)];
    expect_agrees(m, "mutated");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(parsed, 4000);  // every valid line of the contract's shape takes the fast path
}

std::vector<std::string> read_lines(const std::string& data, std::size_t chunk) {
  FILE* f = tmpfile();
  fwrite(data.data(), 1, data.size(), f);
  fflush(f);
  rewind(f);
  glassbox::jsonl::LineReader r(fileno(f), chunk);
  std::vector<std::string> out;
  std::string_view line;
  while (r.next(line)) out.emplace_back(line);
  EXPECT_TRUE(r.status().ok()) << r.status().to_string();
  fclose(f);
  return out;
}

TEST(JsonlReader, LinesSplitAsGetline) {
  const std::vector<std::string> inputs = {"", "\n", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n\n", "long line here\r\nx\r\n",
                                           std::string(5000, 'x') + "\n" + std::string(3, 'y')};
  for (const auto& data : inputs) {
    std::vector<std::string> want;
    std::istringstream in(data);
    for (std::string l; std::getline(in, l);) want.push_back(l);
    for (std::size_t chunk : {1, 2, 3, 7, 1 << 20}) EXPECT_EQ(read_lines(data, chunk), want) << "chunk " << chunk;
  }
}

TEST(JsonlReader, ReadAndWriteErrorsAreIo) {
  glassbox::jsonl::LineReader r(-1);
  std::string_view line;
  EXPECT_FALSE(r.next(line));
  ASSERT_FALSE(r.status().ok());
  EXPECT_EQ(r.status().error().code, glassbox::ErrorCode::kIo);
  glassbox::jsonl::OutBuffer out(-1, 4);
  out.buf() = "abc";
  EXPECT_TRUE(out.maybe_flush().ok());  // below the threshold: nothing written yet
  out.buf() += "de";
  auto st = out.maybe_flush();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, glassbox::ErrorCode::kIo);
}

TEST(JsonlReader, OutBufferWritesEverything) {
  FILE* f = tmpfile();
  glassbox::jsonl::OutBuffer out(fileno(f), 8);
  std::string want;
  for (int i = 0; i < 100; ++i) {
    out.buf() += "line " + std::to_string(i) + "\n";
    want += "line " + std::to_string(i) + "\n";
    ASSERT_TRUE(out.maybe_flush().ok());
  }
  ASSERT_TRUE(out.flush().ok());
  rewind(f);
  std::string got(want.size() + 10, '\0');
  got.resize(fread(got.data(), 1, got.size(), f));
  EXPECT_EQ(got, want);
  fclose(f);
}

}  // namespace
