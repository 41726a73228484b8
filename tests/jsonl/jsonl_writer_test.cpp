// The fast JSON string writer against nlohmann::json::dump(-1, ' ', false, replace), byte for byte: the
// encode/classify/embed output contract before the fast path existed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/jsonl.h"

namespace {

std::string nlohmann_dump(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string fast_dump(const std::string& s) {
  std::string out;
  glassbox::jsonl::append_string(out, s);
  return out;
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

TEST(JsonlWriter, AwkwardStringsEqualNlohmann) {
  std::vector<std::string> cases = {
      "", "plain ascii", "quote \" and backslash \\ and slash /", "\b\f\n\r\t", "\x7f del",
      std::string("nul \0 inside", 12), "\x01\x02\x1b\x1f", "U+2028 \xE2\x80\xA8 U+2029 \xE2\x80\xA9",
      "non-BMP \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF", "BMP edge \xEF\xBF\xBF \xEF\xBB\xBF", "caf\xC3\xA9 \xE6\xBC\xA2",
      // encoded surrogates (CESU / WTF-8 lone surrogates) are ill-formed UTF-8
      "lone high \xED\xA0\x80 lone low \xED\xB0\x80", "pair as CESU \xED\xA0\xBD\xED\xB8\x80",
      "overlong \xC0\xAF \xE0\x80\xAF \xF0\x80\x80\xAF", "above U+10FFFF \xF4\x90\x80\x80 \xF5\x80\x80\x80",
      "stray continuation \x80\xBF", "truncated at end \xE2\x82", "truncated \xF0\x9F\x98 then text",
      "cut by quote \xE2\"", "cut by lead \xE2\xE2\x82\xAC", "\xFF\xFE", bytes({0xC2}), bytes({0xF0, 0x9F}),
  };
  for (const auto& s : cases) EXPECT_EQ(fast_dump(s), nlohmann_dump(s)) << "input bytes: " << nlohmann_dump(s);
}

// Random byte strings over an alphabet rich in UTF-8 boundary bytes: every way a sequence can start, continue
// or break. Fixed seed; each string is compared whole.
TEST(JsonlWriter, RandomBytesEqualNlohmann) {
  const std::vector<int> alphabet = {0x00, 0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, ' ', '"', '\\', '/', 'a', 0x7F,
                                     0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                     0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFE, 0xFF};
  std::mt19937 rng(20261204);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1), len(0, 10);
  int mismatches = 0;
  for (int n = 0; n < 30000 && mismatches < 5; ++n) {
    std::string s;
    for (std::size_t k = len(rng); k > 0; --k) s += static_cast<char>(alphabet[pick(rng)]);
    const std::string want = nlohmann_dump(s), got = fast_dump(s);
    if (got != want) {
      ++mismatches;
      ADD_FAILURE() << "case " << n << ": fast " << nlohmann::json(got).dump() << " nlohmann "
                    << nlohmann::json(want).dump();
    }
  }
}

// Every scalar value and every encoded surrogate, one at a time between ASCII neighbours.
TEST(JsonlWriter, EveryCodePointEqualsNlohmann) {
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x3000 ? 1 : 97)) {
    std::string s = "<";
    if (cp < 0x80) s += static_cast<char>(cp);
    else if (cp < 0x800) s += bytes({0xC0 | int(cp >> 6), 0x80 | int(cp & 0x3F)});
    else if (cp < 0x10000) s += bytes({0xE0 | int(cp >> 12), 0x80 | int((cp >> 6) & 0x3F), 0x80 | int(cp & 0x3F)});
    else s += bytes({0xF0 | int(cp >> 18), 0x80 | int((cp >> 12) & 0x3F), 0x80 | int((cp >> 6) & 0x3F), 0x80 | int(cp & 0x3F)});
    s += ">";
    ASSERT_EQ(fast_dump(s), nlohmann_dump(s)) << "U+" << std::hex << cp;
  }
}

TEST(JsonlWriter, NumbersAndArraysEqualNlohmann) {
  const std::vector<std::uint32_t> v = {0, 1, 9, 10, 4294967295u, 128000};
  const std::vector<std::pair<std::size_t, std::size_t>> offs = {{0, 0}, {3, 18446744073709551615ull}};
  const std::vector<std::string> toks = {"\xC4\xA0the", "<|begin_of_text|>", "\n", "\xE2"};
  std::string out;
  glassbox::jsonl::append_uint_array(out, v);
  EXPECT_EQ(out, nlohmann::json(v).dump());
  out.clear();
  glassbox::jsonl::append_uint_array(out, {});
  EXPECT_EQ(out, "[]");
  out.clear();
  glassbox::jsonl::append_pair_array(out, offs);
  nlohmann::json jo = nlohmann::json::array();
  for (auto& o : offs) jo.push_back({o.first, o.second});
  EXPECT_EQ(out, jo.dump());
  out.clear();
  glassbox::jsonl::append_string_array(out, toks);
  EXPECT_EQ(out, nlohmann::json(toks).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace
