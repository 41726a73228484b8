// UTF-8 helpers, Unicode character properties (ICU) and the aligned normalized string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/utf8.h"

namespace glassbox::tok {

// ---- UTF-8 ----
// Decodes the code point at s[i] (s must be valid UTF-8); sets len to its byte length.
inline char32_t utf8_decode(std::string_view s, std::size_t i, int& len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) { len = 1; return c; }
  if (c < 0xE0) { len = 2; return ((c & 0x1F) << 6) | (s[i + 1] & 0x3F); }
  if (c < 0xF0) { len = 3; return ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F); }
  len = 4;
  return ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
}
inline int utf8_len_lead(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }
// utf8_append (a code point as UTF-8): glassbox::utf8_append, core/utf8.h.
// Byte offset of the first invalid sequence, or npos if `s` is valid UTF-8 (no surrogates).
std::size_t utf8_first_invalid(std::string_view s);
// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);
std::u32string to_u32(std::string_view s);
std::size_t utf8_count(std::string_view s);

// ---- character properties (see docs/tokenizer.md for Unicode-version differences) ----
bool is_whitespace(char32_t c);    // Rust char::is_whitespace (White_Space)
bool is_numeric(char32_t c);       // N* (Nd | Nl | No)
bool is_punctuation(char32_t c);   // P*
bool is_ascii_punctuation(char32_t c);
bool is_mark_nonspacing(char32_t c);  // Mn
bool is_mark(char32_t c);             // Mn | Mc | Me
bool is_other(char32_t c);            // Cc | Cf | Co (unicode_categories' is_other as used by BERT)
bool is_word_char(char32_t c);        // regex \w (Alphabetic | M | Nd | Pc | Join_Control)
// Full lowercase mapping of one char without context (Rust char::to_lowercase).
void to_lowercase(char32_t c, std::u32string& out);
enum class NormForm { kNFC, kNFD, kNFKC, kNFKD };
// Normalizes a run of code points.
std::u32string normalize_chars(const std::u32string& in, NormForm form);
// True if a normalization boundary lies before c (c starts a new independent chunk).
bool norm_boundary_before(char32_t c, NormForm form);
bool norm_is_inert_ascii(std::string_view s);

// ---- aligned string ----
// Original-byte range a normalized byte came from (absolute in the input sequence).
struct Align {
  std::uint32_t s = 0, e = 0;
};

// A piece of normalized text; align[i] is the original range of normalized byte i.
struct NStr {
  std::string norm;
  std::vector<Align> align;
  std::uint32_t orig_start = 0;  // original offset where this piece begins (for inserts at index 0)
  std::uint32_t orig_end = 0;

  static NStr from_original(std::string_view text, std::uint32_t base);
  bool empty() const { return norm.empty(); }
  // Sub-piece covering normalized bytes [a, b).
  NStr slice(std::size_t a, std::size_t b) const;
  // Original range of normalized bytes [a, b) (a < b).
  std::pair<std::uint32_t, std::uint32_t> original_range(std::size_t a, std::size_t b) const {
    return {align[a].s, align[b - 1].e};
  }
};

// One output char of a transformation and its change: 0 replaces the next input char,
// +1 is inserted (copies the previous byte's alignment), -n replaces and drops n more.
struct CharChange {
  char32_t c;
  int change;
};
// Rebuilds `ns` from `dest`; `initial_offset` input chars are dropped before the first output.
void transform(NStr& ns, const std::vector<CharChange>& dest, std::size_t initial_offset);
// Prepends `s` with the alignment of the first char (no-op on empty text).
void prepend(NStr& ns, std::string_view s);
// HF NormalizedString::filter: keep chars for which keep(c) is true.
template <class F>
void filter(NStr& ns, F keep);
// HF NormalizedString::map (1:1 char map).
template <class F>
void map_chars(NStr& ns, F fn);
// Applies a Unicode normalization form keeping alignments.
void normalize_form(NStr& ns, NormForm form);
void lowercase(NStr& ns);

template <class F>
void filter(NStr& ns, F keep) {
  std::vector<CharChange> dest;
  dest.reserve(ns.norm.size());
  int removed = 0;
  std::size_t removed_start = 0;
  bool have_last = false;
  char32_t last = 0;
  for (std::size_t i = 0; i < ns.norm.size();) {
    int len;
    char32_t c = utf8_decode(ns.norm, i, len);
    i += len;
    if (keep(c)) {
      if (have_last) dest.push_back({last, -removed});
      else removed_start = static_cast<std::size_t>(removed);
      last = c;
      have_last = true;
      removed = 0;
    } else {
      ++removed;
    }
  }
  if (have_last) dest.push_back({last, -removed});
  else removed_start = static_cast<std::size_t>(removed);
  transform(ns, dest, removed_start);
}

template <class F>
void map_chars(NStr& ns, F fn) {
  std::string out;
  out.reserve(ns.norm.size());
  std::vector<Align> al;
  al.reserve(ns.norm.size());
  for (std::size_t i = 0; i < ns.norm.size();) {
    int len;
    char32_t c = utf8_decode(ns.norm, i, len);
    char32_t m = fn(c);
    Align a = ns.align[i];
    std::size_t before = out.size();
    utf8_append(out, m);
    al.insert(al.end(), out.size() - before, a);
    i += len;
  }
  ns.norm = std::move(out);
  ns.align = std::move(al);
}

}  // namespace glassbox::tok
