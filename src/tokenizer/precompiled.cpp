#include "tokenizer/precompiled.h"

#include "tokenizer/text.h"

namespace glassbox::tok {

std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[k] = value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const std::uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
    // Canonical encoding: the bits dropped by the padding must be zero.
    if ((pad == 1 && (v[2] & 0x3)) || (pad == 2 && (v[1] & 0xF))) return std::nullopt;
  }
  return out;
}

Result<CharsMap> CharsMap::parse(std::string_view blob) {
  auto u32_at = [&](std::size_t p) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(blob[p])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(blob[p + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(blob[p + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(blob[p + 3])) << 24;
  };
  if (blob.size() < 4)
    return make_error(ErrorCode::kInvalidModel, "precompiled_charsmap is shorter than its 4-byte header", {},
                      "use the charsmap of a SentencePiece model");
  const std::uint32_t trie_bytes = u32_at(0);
  const std::size_t units = trie_bytes / 4;  // like SentencePiece/HF, a trailing partial unit is ignored
  if (units > (blob.size() - 4) / 4)
    return make_error(ErrorCode::kInvalidModel,
                      "precompiled_charsmap declares a " + std::to_string(trie_bytes) + "-byte trie but holds only " +
                          std::to_string(blob.size() - 4) + " bytes after the header",
                      {}, "the charsmap is truncated or corrupt");
  CharsMap m;
  m.trie_.resize(units);
  for (std::size_t i = 0; i < units; ++i) m.trie_[i] = u32_at(4 + 4 * i);
  m.normalized_.assign(blob.substr(4 + 4 * units));
  if (std::size_t bad = utf8_first_invalid(m.normalized_); bad != std::string::npos)
    return make_error(ErrorCode::kInvalidModel,
                      "precompiled_charsmap replacement strings are not valid UTF-8 (byte " + std::to_string(bad) + ")",
                      {}, "the charsmap is corrupt");
  if (m.trie_.empty())
    return make_error(ErrorCode::kInvalidModel, "precompiled_charsmap has an empty trie", {},
                      "use the charsmap of a SentencePiece model");
  return m;
}

std::optional<std::string_view> CharsMap::transform(std::string_view chunk) const {
  // darts-clone unit layout: bit 8 = has leaf, bits 0..7 = label (bit 31 marks a leaf unit),
  // offset = (unit >> 10) << ((unit & (1 << 9)) >> 6), leaf value = unit & 0x7FFFFFFF.
  auto offset = [](std::uint32_t u) -> std::size_t { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  auto label = [](std::uint32_t u) -> std::uint32_t { return u & ((1u << 31) | 0xFFu); };
  std::size_t pos = offset(trie_[0]);
  for (unsigned char c : chunk) {
    if (c == 0) break;
    pos ^= c;
    if (pos >= trie_.size()) return std::nullopt;
    const std::uint32_t unit = trie_[pos];
    if (label(unit) != c) return std::nullopt;
    pos ^= offset(unit);
    if ((unit >> 8) & 1) {  // shortest match: the first leaf found
      if (pos >= trie_.size()) return std::nullopt;
      const std::size_t begin = trie_[pos] & 0x7FFFFFFFu;
      if (begin > normalized_.size()) return std::nullopt;
      std::size_t end = normalized_.find('\0', begin);
      if (end == std::string::npos) end = normalized_.size();
      std::string_view v(normalized_.data() + begin, end - begin);
      // A value that does not start on a char boundary would panic in HF; treat it as no match.
      if (utf8_first_invalid(v) != std::string::npos) return std::nullopt;
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace glassbox::tok
