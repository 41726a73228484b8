// SentencePiece "precompiled_charsmap" (the Precompiled normalizer of tokenizer.json).
//
// The blob is [u32 LE trie byte size][trie: u32 LE units of a darts-clone double array]
// [normalized strings, each NUL-terminated]. A trie key is a UTF-8 byte string; its value is
// the byte offset of the replacement in the normalized strings. HF (crate spm_precompiled)
// replaces each extended grapheme cluster shorter than 6 bytes by the value of the SHORTEST
// key that prefixes it; otherwise (or without a match) each char by the value of the shortest
// key prefixing that char. We reproduce that exactly, including its oddities.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::tok {

class CharsMap {
 public:
  // Parses a decoded charsmap blob; fails on a truncated trie or non-UTF-8 strings.
  static Result<CharsMap> parse(std::string_view blob);
  // The replacement for the shortest trie key that prefixes `chunk`, or nullopt.
  // Corrupt tries (positions or offsets out of range) yield nullopt, never a read out of bounds.
  std::optional<std::string_view> transform(std::string_view chunk) const;

 private:
  std::vector<std::uint32_t> trie_;
  std::string normalized_;
};

// Strict RFC 4648 base64 (standard alphabet, '=' padding required), as the HF loader demands.
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace glassbox::tok
