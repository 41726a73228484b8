// Text streaming with a real byte-level BPE tokenizer (tests/data/tokenizer/models/roberta-bpe.json):
// a character split over tokens is held until complete, stop strings are found across tokens and
// never emitted, and the streamed pieces always add up to the decoding of all ids.
#include "generation/text_stream.h"

#include <gtest/gtest.h>

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

}  // namespace
