#include "tokenizer/text.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/unistr.h>

#include <mutex>

namespace glassbox::tok {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid; `sub` receives the
// length of the maximal valid-prefix subpart (at least 1) when invalid.
static int utf8_valid_at(std::string_view s, std::size_t i, int& sub) {
  auto b = [&](std::size_t k) -> unsigned { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0x100u; };
  unsigned c = b(i);
  sub = 1;
  if (c < 0x80) return 1;
  int need;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c == 0xE0) { need = 2; lo = 0xA0; }
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
  else if (c == 0xED) { need = 2; hi = 0x9F; }
  else if (c == 0xF0) { need = 3; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) need = 3;
  else if (c == 0xF4) { need = 3; hi = 0x8F; }
  else return 0;
  for (int k = 1; k <= need; ++k) {
    unsigned x = b(i + k);
    unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (x < l || x > h) { sub = k; return 0; }
  }
  return need + 1;
}

std::size_t utf8_first_invalid(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { ++i; continue; }
    int sub;
    int n = utf8_valid_at(s, i, sub);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    int sub;
    int n = utf8_valid_at(s, i, sub);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += sub;
    }
  }
  return out;
}

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    int len;
    out.push_back(utf8_decode(s, i, len));
    i += len;
  }
  return out;
}

std::size_t utf8_count(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}
bool is_numeric(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}
bool is_ascii_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}
bool is_punctuation(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_CONNECTOR_PUNCTUATION || t == U_DASH_PUNCTUATION || t == U_START_PUNCTUATION ||
         t == U_END_PUNCTUATION || t == U_INITIAL_PUNCTUATION || t == U_FINAL_PUNCTUATION ||
         t == U_OTHER_PUNCTUATION;
}
bool is_mark_nonspacing(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK; }
bool is_mark(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_NON_SPACING_MARK || t == U_COMBINING_SPACING_MARK || t == U_ENCLOSING_MARK;
}
bool is_other(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_PRIVATE_USE_CHAR;
}
bool is_word_char(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
  int t = u_charType(static_cast<UChar32>(c));
  return u_isUAlphabetic(static_cast<UChar32>(c)) || t == U_NON_SPACING_MARK || t == U_COMBINING_SPACING_MARK ||
         t == U_ENCLOSING_MARK || t == U_DECIMAL_DIGIT_NUMBER || t == U_CONNECTOR_PUNCTUATION || c == 0x200C ||
         c == 0x200D;
}

void to_lowercase(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out.push_back((c >= 'A' && c <= 'Z') ? c + 32 : c);
    return;
  }
  UChar src[2];
  int32_t n = 0;
  U16_APPEND_UNSAFE(src, n, static_cast<UChar32>(c));
  UChar dst[16];
  UErrorCode st = U_ZERO_ERROR;
  int32_t m = u_strToLower(dst, 16, src, n, "", &st);
  if (U_FAILURE(st)) {
    out.push_back(c);
    return;
  }
  for (int32_t i = 0; i < m;) {
    UChar32 x;
    U16_NEXT(dst, i, m, x);
    out.push_back(static_cast<char32_t>(x));
  }
}

static const icu::Normalizer2* normalizer_for(NormForm f) {
  UErrorCode st = U_ZERO_ERROR;
  switch (f) {
    case NormForm::kNFC: return icu::Normalizer2::getNFCInstance(st);
    case NormForm::kNFD: return icu::Normalizer2::getNFDInstance(st);
    case NormForm::kNFKC: return icu::Normalizer2::getNFKCInstance(st);
    case NormForm::kNFKD: return icu::Normalizer2::getNFKDInstance(st);
  }
  return nullptr;
}

std::u32string normalize_chars(const std::u32string& in, NormForm form) {
  icu::UnicodeString src;
  for (char32_t c : in) src.append(static_cast<UChar32>(c));
  UErrorCode st = U_ZERO_ERROR;
  icu::UnicodeString dst = normalizer_for(form)->normalize(src, st);
  std::u32string out;
  for (int32_t i = 0; i < dst.length();) {
    UChar32 x = dst.char32At(i);
    out.push_back(static_cast<char32_t>(x));
    i += U16_LENGTH(x);
  }
  return out;
}

bool norm_boundary_before(char32_t c, NormForm form) {
  return normalizer_for(form)->hasBoundaryBefore(static_cast<UChar32>(c));
}

bool norm_is_inert_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

NStr NStr::from_original(std::string_view text, std::uint32_t base) {
  NStr ns;
  ns.norm.assign(text);
  ns.align.resize(text.size());
  for (std::size_t i = 0; i < text.size();) {
    int len = utf8_len_lead(static_cast<unsigned char>(text[i]));
    Align a{base + static_cast<std::uint32_t>(i), base + static_cast<std::uint32_t>(i + len)};
    for (int k = 0; k < len; ++k) ns.align[i + k] = a;
    i += len;
  }
  ns.orig_start = base;
  ns.orig_end = base + static_cast<std::uint32_t>(text.size());
  return ns;
}

NStr NStr::slice(std::size_t a, std::size_t b) const {
  NStr out;
  out.norm.assign(norm, a, b - a);
  out.align.assign(align.begin() + a, align.begin() + b);
  if (a < b) {
    out.orig_start = align[a].s;
    out.orig_end = align[b - 1].e;
  } else {
    out.orig_start = out.orig_end = a < align.size() ? align[a].s : orig_end;
  }
  return out;
}

void transform(NStr& ns, const std::vector<CharChange>& dest, std::size_t initial_offset) {
  const std::string& old = ns.norm;
  std::size_t pos = 0;  // byte position of the next unconsumed old char
  auto skip_char = [&]() -> std::size_t {
    if (pos >= old.size()) return 0;
    std::size_t l = utf8_len_lead(static_cast<unsigned char>(old[pos]));
    pos += l;
    return l;
  };
  for (std::size_t k = 0; k < initial_offset; ++k) skip_char();
  std::string out;
  out.reserve(old.size() + dest.size());
  std::vector<Align> al;
  al.reserve(old.size() + dest.size());
  for (const CharChange& cc : dest) {
    Align a;
    if (cc.change > 0) {
      a = pos < 1 ? Align{ns.orig_start, ns.orig_start} : ns.align[pos - 1];
    } else {
      a = pos < ns.align.size() ? ns.align[pos] : Align{ns.orig_end, ns.orig_end};
      skip_char();
      for (int k = 0; k < -cc.change; ++k) skip_char();
    }
    std::size_t before = out.size();
    utf8_append(out, cc.c);
    al.insert(al.end(), out.size() - before, a);
  }
  ns.norm = std::move(out);
  ns.align = std::move(al);
}

void prepend(NStr& ns, std::string_view s) {
  if (ns.norm.empty() || s.empty()) return;
  Align a = ns.align[0];
  std::string out;
  out.reserve(s.size() + ns.norm.size());
  out.append(s);
  out.append(ns.norm);
  std::vector<Align> al;
  al.reserve(out.size());
  al.insert(al.end(), s.size(), a);
  al.insert(al.end(), ns.align.begin(), ns.align.end());
  // HF re-emits the first char as an insertion: it keeps the first char's alignment anyway.
  ns.norm = std::move(out);
  ns.align = std::move(al);
}

void lowercase(NStr& ns) {
  bool ascii_only = true;
  bool any_upper = false;
  for (unsigned char c : ns.norm) {
    if (c >= 0x80) { ascii_only = false; break; }
    if (c >= 'A' && c <= 'Z') any_upper = true;
  }
  if (ascii_only) {
    if (any_upper)
      for (char& c : ns.norm)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return;
  }
  std::vector<CharChange> dest;
  dest.reserve(ns.norm.size());
  std::u32string tmp;
  for (std::size_t i = 0; i < ns.norm.size();) {
    int len;
    char32_t c = utf8_decode(ns.norm, i, len);
    i += len;
    tmp.clear();
    to_lowercase(c, tmp);
    for (std::size_t k = 0; k < tmp.size(); ++k) dest.push_back({tmp[k], k > 0 ? 1 : 0});
  }
  transform(ns, dest, 0);
}

// Normalizes chunk by chunk (a chunk ends before each normalization boundary). For a
// chunk of k chars giving m chars: the first min(k,m) outputs replace inputs in order,
// extra outputs are insertions, and missing ones are removals charged to the first output.
void normalize_form(NStr& ns, NormForm form) {
  if (norm_is_inert_ascii(ns.norm)) return;
  {
    UErrorCode st = U_ZERO_ERROR;
    icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(ns.norm.data(), static_cast<int32_t>(ns.norm.size())));
    if (normalizer_for(form)->isNormalized(u, st) && U_SUCCESS(st)) return;
  }
  std::u32string chars = to_u32(ns.norm);
  std::vector<CharChange> dest;
  dest.reserve(chars.size() + 8);
  std::size_t initial = 0;
  bool any_change = false;
  std::size_t i = 0;
  while (i < chars.size()) {
    std::size_t j = i + 1;
    while (j < chars.size() && !norm_boundary_before(chars[j], form)) ++j;
    std::u32string chunk = chars.substr(i, j - i);
    std::u32string outc = normalize_chars(chunk, form);
    if (outc != chunk) any_change = true;
    std::size_t k = chunk.size(), m = outc.size();
    if (m == 0) {
      if (dest.empty()) initial += k;
      else dest.back().change -= static_cast<int>(k);
    } else {
      for (std::size_t t = 0; t < m; ++t) {
        int ch = t < k ? 0 : 1;
        if (t == 0 && k > m) ch = -static_cast<int>(k - m);  // composition: removals go to the first output
        dest.push_back({outc[t], ch});
      }
    }
    i = j;
  }
  if (!any_change) return;
  transform(ns, dest, initial);
}

}  // namespace glassbox::tok
