// Fuzzes encode/decode on fixed tokenizers (byte-level BPE, WordPiece, Unigram, WordLevel,
// SentencePiece Precompiled + Unigram, UnicodeScripts): the first
// bytes pick the tokenizer and the truncation/padding policy, the rest is the text. Every
// input is also encoded with EncodeOptions::fast_paths = false: any difference between the
// fast and the general path is a crash.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

namespace {
std::vector<glassbox::Tokenizer>& tokenizers() {
  static std::vector<glassbox::Tokenizer> v = [] {
    std::vector<glassbox::Tokenizer> out;
    for (const char* f : {"roberta-bpe", "bert-uncased", "unigram", "wordlevel", "spm-unigram", "scripts-wordlevel"}) {
      auto t = glassbox::Tokenizer::from_file(std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/tokenizer/models/" + f +
                                              ".json");
      if (!t.ok()) __builtin_trap();
      out.push_back(std::move(t).value());
    }
    return out;
  }();
  return v;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  auto& tks = tokenizers();
  const glassbox::Tokenizer& tk = tks[data[0] % tks.size()];
  glassbox::EncodeOptions o;
  o.add_special_tokens = data[1] & 1;
  o.offsets = (data[1] & 2) ? glassbox::OffsetUnit::kBytes : glassbox::OffsetUnit::kChars;
  if (data[1] & 4) {
    o.truncation_from_file = false;
    std::size_t max = data[2] % 40;
    o.truncation = glassbox::TruncationPolicy{max,
                                              static_cast<glassbox::TruncationStrategy>((data[1] >> 3) % 3),
                                              (data[1] & 32) ? glassbox::Side::kLeft : glassbox::Side::kRight,
                                              static_cast<std::size_t>(data[2] >> 6)};
  }
  if (data[1] & 64) {
    o.padding_from_file = false;
    glassbox::PaddingPolicy p;
    p.pad_to_multiple_of = data[2] % 5;
    p.direction = (data[1] & 128) ? glassbox::Side::kLeft : glassbox::Side::kRight;
    o.padding = p;
  }
  std::string text(reinterpret_cast<const char*>(data + 3), size - 3);
  std::size_t cut = text.find('\x01');
  std::optional<std::string_view> pair;
  std::string first = text, second;
  if (cut != std::string::npos) {
    first = text.substr(0, cut);
    second = text.substr(cut + 1);
    pair = second;
  }
  auto e = tk.encode(first, pair, o);
  if (e.ok()) {
    std::size_t limit = o.offsets == glassbox::OffsetUnit::kBytes ? std::max(first.size(), second.size()) : size;
    for (auto& off : e->offsets)
      if (off.first > off.second || off.second > limit) __builtin_trap();
    auto d = tk.decode(e->ids, false);
    if (!d.ok()) __builtin_trap();  // ids we produced must decode
  }
  glassbox::EncodeOptions general = o;
  general.fast_paths = false;
  auto g = tk.encode(first, pair, general);
  if (e.ok() != g.ok()) __builtin_trap();
  if (e.ok() && (e->ids != g->ids || e->tokens != g->tokens || e->offsets != g->offsets || e->word_ids != g->word_ids ||
                 e->type_ids != g->type_ids || e->attention_mask != g->attention_mask ||
                 e->special_tokens_mask != g->special_tokens_mask || e->overflowing.size() != g->overflowing.size()))
    __builtin_trap();
  return 0;
}
