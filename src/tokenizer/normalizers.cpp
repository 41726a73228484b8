// Normalizers of tokenizer.json ("normalizer" field).
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include "tokenizer/components.h"
#include "tokenizer/precompiled.h"

namespace glassbox::tok {
namespace {

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

class BertNormalizer : public Normalizer {
 public:
  bool clean_text = true, chinese = true, lowercase_ = true;
  std::optional<bool> strip_accents;
  Status normalize(NStr& ns) const override {
    if (fast_paths_enabled() && normalize_by_table(ns)) return Status();
    return normalize_general(ns);
  }

  // The general path: HF's steps one after the other on the whole piece.
  Status normalize_general(NStr& ns) const {
    if (clean_text) {
      bool clean = true;
      for (unsigned char c : ns.norm)
        if (c >= 0x80 || c < 0x20 || c == 0x7F) { clean = false; break; }
      if (!clean) {
        clean = true;  // only run the (allocating) transforms when a char is affected
        for (std::size_t i = 0; i < ns.norm.size() && clean;) {
          int len;
          char32_t c = utf8_decode(ns.norm, i, len);
          i += len;
          if (c == ' ') continue;
          if (c == 0 || c == 0xFFFD || c == '\t' || c == '\n' || c == '\r' || is_other(c) || is_whitespace(c)) clean = false;
        }
      }
      if (!clean) {
        filter(ns, [](char32_t c) {
          if (c == 0 || c == 0xFFFD) return false;
          if (c == '\t' || c == '\n' || c == '\r') return true;
          return !is_other(c);
        });
        map_chars(ns, [](char32_t c) -> char32_t {
          return (c == '\t' || c == '\n' || c == '\r' || is_whitespace(c)) ? U' ' : c;
        });
      }
    }
    if (chinese && !norm_is_inert_ascii(ns.norm)) {
      std::vector<CharChange> dest;
      bool any = false;
      for (std::size_t i = 0; i < ns.norm.size();) {
        int len;
        char32_t c = utf8_decode(ns.norm, i, len);
        i += len;
        if (is_chinese_char(c)) {
          dest.push_back({U' ', 0});
          dest.push_back({c, 1});
          dest.push_back({U' ', 1});
          any = true;
        } else {
          dest.push_back({c, 0});
        }
      }
      if (any) transform(ns, dest, 0);
    }
    bool strip = strip_accents.value_or(lowercase_);
    if (strip && !norm_is_inert_ascii(ns.norm)) {
      normalize_form(ns, NormForm::kNFD);
      bool any_mn = false;
      for (std::size_t i = 0; i < ns.norm.size() && !any_mn;) {
        int len;
        char32_t c = utf8_decode(ns.norm, i, len);
        i += len;
        any_mn = c >= 0x300 && is_mark_nonspacing(c);
      }
      if (any_mn) filter(ns, [](char32_t c) { return !is_mark_nonspacing(c); });
    }
    if (lowercase_) lowercase(ns);
    return Status();
  }

 private:
  // Fast path. Every step of BertNormalizer is a function of one character (clean-up,
  // CJK padding, accent stripping, lowercase) except NFD's canonical reordering, which
  // can only move a combining mark across a character boundary when the next character's
  // decomposition starts with a non-starter. So for text without such characters the
  // result is the concatenation of per-character results, each output byte aligned to
  // the character it came from (what transform() gives). The table caches, per code
  // point, the general path's result on that character alone; characters it cannot
  // represent (non-starters under NFD, results over 14 bytes) send the whole piece to
  // the general path. Entries are filled lazily, once, under a mutex.
  struct Entry {
    std::atomic<std::uint8_t> state{0};  // 0 not computed, 1 usable, 2 needs the general path
    std::uint8_t len = 0;
    char bytes[14] = {};
  };
  static constexpr std::size_t kBlock = 256;
  mutable std::array<std::atomic<Entry*>, 0x110000 / kBlock> blocks_{};
  mutable std::mutex mu_;

 public:
  BertNormalizer() = default;
  BertNormalizer(const BertNormalizer&) = delete;
  BertNormalizer& operator=(const BertNormalizer&) = delete;
  ~BertNormalizer() override {
    for (auto& b : blocks_) delete[] b.load(std::memory_order_relaxed);
  }

 private:
  const Entry& entry(char32_t c) const {
    std::atomic<Entry*>& slot = blocks_[c / kBlock];
    Entry* b = slot.load(std::memory_order_acquire);
    if (b != nullptr) {
      const Entry& e = b[c % kBlock];
      if (e.state.load(std::memory_order_acquire) != 0) return e;
    }
    std::lock_guard<std::mutex> lock(mu_);
    b = slot.load(std::memory_order_relaxed);
    if (b == nullptr) {
      b = new Entry[kBlock];
      slot.store(b, std::memory_order_release);
    }
    Entry& e = b[c % kBlock];
    if (e.state.load(std::memory_order_relaxed) == 0) fill(c, e);
    return e;
  }

  void fill(char32_t c, Entry& e) const {
    std::uint8_t state = 2;
    bool strip = strip_accents.value_or(lowercase_);
    if (!(c >= 0xD800 && c <= 0xDFFF) && (!strip || norm_boundary_before(c, NormForm::kNFD))) {
      std::string one;
      utf8_append(one, c);
      NStr ns = NStr::from_original(one, 0);
      bool aligned = normalize_general(ns).ok() && ns.norm.size() <= sizeof(e.bytes);
      for (const Align& a : ns.align) aligned = aligned && a.s == 0 && a.e == one.size();
      if (aligned) {
        e.len = static_cast<std::uint8_t>(ns.norm.size());
        std::memcpy(e.bytes, ns.norm.data(), ns.norm.size());
        state = 1;
      }
    }
    e.state.store(state, std::memory_order_release);
  }

  bool normalize_by_table(NStr& ns) const {
    const std::string& s = ns.norm;
    std::size_t i = 0;
    // In place while every character is ASCII and maps to one byte.
    for (; i < s.size(); ++i) {
      unsigned char b = static_cast<unsigned char>(s[i]);
      if (b >= 0x80) break;
      const Entry& e = entry(b);
      // Returning false after bytes were mapped in place is safe: the ASCII results the
      // table holds (lowercase letters, ' ') are fixed points of the general path.
      if (e.state.load(std::memory_order_relaxed) != 1) return false;
      if (e.len != 1) break;
      ns.norm[i] = e.bytes[0];
    }
    if (i == s.size()) return true;
    thread_local std::string out;
    thread_local std::vector<Align> al;
    out.assign(s, 0, i);
    al.assign(ns.align.begin(), ns.align.begin() + static_cast<std::ptrdiff_t>(i));
    while (i < s.size()) {
      int len;
      char32_t c = utf8_decode(s, i, len);
      const Entry& e = entry(c);
      if (e.state.load(std::memory_order_relaxed) != 1) return false;  // ns untouched past the ASCII prefix
      out.append(e.bytes, e.len);
      al.insert(al.end(), e.len, ns.align[i]);
      i += static_cast<std::size_t>(len);
    }
    std::swap(ns.norm, out);
    std::swap(ns.align, al);
    return true;
  }
};

class UnicodeNormalizer : public Normalizer {
 public:
  NormForm form;
  explicit UnicodeNormalizer(NormForm f) : form(f) {}
  Status normalize(NStr& ns) const override {
    normalize_form(ns, form);
    return Status();
  }
};

class LowercaseNormalizer : public Normalizer {
 public:
  Status normalize(NStr& ns) const override {
    lowercase(ns);
    return Status();
  }
};

class StripAccentsNormalizer : public Normalizer {
 public:
  Status normalize(NStr& ns) const override {
    if (!norm_is_inert_ascii(ns.norm)) filter(ns, [](char32_t c) { return !is_mark(c); });
    return Status();
  }
};

class StripNormalizer : public Normalizer {
 public:
  bool left = true, right = true;
  Status normalize(NStr& ns) const override {
    std::u32string cs = to_u32(ns.norm);
    std::size_t lead = 0, trail = 0;
    if (left)
      while (lead < cs.size() && is_whitespace(cs[lead])) ++lead;
    if (right)
      while (trail < cs.size() - lead && is_whitespace(cs[cs.size() - 1 - trail])) ++trail;
    if (lead == 0 && trail == 0) return Status();
    std::vector<CharChange> dest;
    for (std::size_t i = lead; i + trail < cs.size(); ++i) dest.push_back({cs[i], 0});
    transform(ns, dest, lead);
    return Status();
  }
};

class ReplaceNormalizer : public Normalizer {
 public:
  PatternSpec pattern;
  std::string content;
  Status normalize(NStr& ns) const override {
    thread_local std::vector<Match> ms;
    GB_RETURN_IF_ERROR(find_pattern(pattern, ns.norm, ms));
    bool any = false;
    for (auto& m : ms) any |= m.is_match;
    if (!any) return Status();
    std::string out;
    std::vector<Align> al;
    out.reserve(ns.norm.size() + content.size());
    al.reserve(ns.norm.size() + content.size());
    for (auto& m : ms) {
      if (!m.is_match) {
        out.append(ns.norm, m.s, m.e - m.s);
        al.insert(al.end(), ns.align.begin() + m.s, ns.align.begin() + m.e);
      } else {
        Align a = m.e < 1 ? Align{ns.orig_start, ns.orig_start} : ns.align[m.e - 1];
        out.append(content);
        al.insert(al.end(), content.size(), a);
      }
    }
    ns.norm = std::move(out);
    ns.align = std::move(al);
    return Status();
  }
};

class PrependNormalizer : public Normalizer {
 public:
  std::string prepend_;
  Status normalize(NStr& ns) const override {
    prepend(ns, prepend_);
    return Status();
  }
};

class NmtNormalizer : public Normalizer {
 public:
  Status normalize(NStr& ns) const override {
    filter(ns, [](char32_t c) {
      return !((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F ||
               c == 0x9F);
    });
    map_chars(ns, [](char32_t c) -> char32_t {
      switch (c) {
        case 0x09: case 0x0A: case 0x0C: case 0x0D: case 0x1680: case 0x200B: case 0x200C: case 0x200D:
        case 0x200E: case 0x200F: case 0x2028: case 0x2029: case 0x2581: case 0xFEFF: case 0xFFFD:
          return U' ';
        default:
          return c;
      }
    });
    return Status();
  }
};

// SentencePiece charsmap normalizer (see precompiled.h for the matching rule).
class PrecompiledNormalizer : public Normalizer {
 public:
  CharsMap map;

  Status normalize(NStr& ns) const override {
    if (ns.norm.empty()) return Status();
    // One character break iterator per thread (creating one costs far more than using it).
    struct Breaker {
      UBreakIterator* it = nullptr;
      UErrorCode status = U_ZERO_ERROR;
      Breaker() { it = ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &status); }
      ~Breaker() {
        if (it) ubrk_close(it);
      }
    };
    thread_local Breaker breaker;
    if (!breaker.it || U_FAILURE(breaker.status))
      return make_error(ErrorCode::kInternal, "ICU grapheme break iterator unavailable", {},
                        "check the ICU data library (libicudata) is installed");
    UErrorCode st = U_ZERO_ERROR;
    UText ut = UTEXT_INITIALIZER;
    utext_openUTF8(&ut, ns.norm.data(), static_cast<int64_t>(ns.norm.size()), &st);
    ubrk_setUText(breaker.it, &ut, &st);
    if (U_FAILURE(st)) {
      utext_close(&ut);
      return make_error(ErrorCode::kInternal, std::string("ICU grapheme segmentation failed: ") + u_errorName(st));
    }
    std::vector<CharChange> dest;
    dest.reserve(ns.norm.size());
    bool modified = false;
    // HF's replace(): new chars replace 1:1; extra chars are insertions (+1 on the last ones);
    // a shorter replacement folds the removed count into the last change recorded so far.
    auto replace = [&](std::string_view old_part, std::string_view new_part) {
      const long old_count = static_cast<long>(utf8_count(old_part));
      const long new_count = static_cast<long>(utf8_count(new_part));
      for (std::size_t i = 0; i < new_part.size();) {
        int len;
        dest.push_back({utf8_decode(new_part, i, len), 0});
        i += len;
      }
      const long diff = new_count - old_count;
      if (diff > 0) {
        for (long k = 0; k < diff; ++k) dest[dest.size() - 1 - k].change = 1;
      } else if (diff < 0 && !dest.empty()) {
        dest.back().change += static_cast<int>(diff);
      }
      modified = true;
    };
    const std::string_view text = ns.norm;
    for (int32_t start = ubrk_first(breaker.it), end = ubrk_next(breaker.it); end != UBRK_DONE;
         start = end, end = ubrk_next(breaker.it)) {
      const std::string_view g = text.substr(start, end - start);
      if (g.size() < 6) {
        if (auto norm = map.transform(g)) {
          replace(g, *norm);
          continue;
        }
      }
      for (std::size_t i = 0; i < g.size();) {
        int len;
        const char32_t c = utf8_decode(g, i, len);
        const std::string_view part = g.substr(i, len);
        if (auto norm = map.transform(part)) replace(part, *norm);
        else dest.push_back({c, 0});
        i += len;
      }
    }
    utext_close(&ut);
    if (modified) transform(ns, dest, 0);
    return Status();
  }
};

class ByteLevelNormalizer : public Normalizer {
 public:
  Status normalize(NStr& ns) const override {
    if (ns.norm.empty()) return Status();
    std::vector<CharChange> dest;
    dest.reserve(ns.norm.size());
    for (std::size_t i = 0; i < ns.norm.size();) {
      int len = utf8_len_lead(static_cast<unsigned char>(ns.norm[i]));
      for (int k = 0; k < len; ++k) dest.push_back({byte_to_char(static_cast<unsigned char>(ns.norm[i + k])), k > 0});
      i += len;
    }
    transform(ns, dest, 0);
    return Status();
  }
};

class SequenceNormalizer : public Normalizer {
 public:
  std::vector<std::unique_ptr<Normalizer>> items;
  Status normalize(NStr& ns) const override {
    for (auto& n : items) GB_RETURN_IF_ERROR(n->normalize(ns));
    return Status();
  }
};

}  // namespace

Result<std::unique_ptr<Normalizer>> load_normalizer(const JsonCtx& c) {
  if (!c.j.is_object()) return c.err("expected an object");
  GB_ASSIGN_OR_RETURN(std::string type, get_string(c, "type", std::nullopt));
  if (type == "BertNormalizer") {
    GB_RETURN_IF_ERROR(check_fields(c, {"clean_text", "handle_chinese_chars", "strip_accents", "lowercase"}));
    auto n = std::make_unique<BertNormalizer>();
    GB_ASSIGN_OR_RETURN(n->clean_text, get_bool(c, "clean_text", true));
    GB_ASSIGN_OR_RETURN(n->chinese, get_bool(c, "handle_chinese_chars", true));
    GB_ASSIGN_OR_RETURN(n->lowercase_, get_bool(c, "lowercase", true));
    if (!c.at("strip_accents").j.is_null()) {
      GB_ASSIGN_OR_RETURN(bool s, get_bool(c, "strip_accents", std::nullopt));
      n->strip_accents = s;
    }
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    NormForm f = type == "NFC" ? NormForm::kNFC : type == "NFD" ? NormForm::kNFD : type == "NFKC" ? NormForm::kNFKC
                                                                                                   : NormForm::kNFKD;
    return std::unique_ptr<Normalizer>(std::make_unique<UnicodeNormalizer>(f));
  }
  if (type == "Lowercase") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Normalizer>(std::make_unique<LowercaseNormalizer>());
  }
  if (type == "StripAccents") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Normalizer>(std::make_unique<StripAccentsNormalizer>());
  }
  if (type == "Strip") {
    GB_RETURN_IF_ERROR(check_fields(c, {"strip_left", "strip_right"}));
    auto n = std::make_unique<StripNormalizer>();
    GB_ASSIGN_OR_RETURN(n->left, get_bool(c, "strip_left", true));
    GB_ASSIGN_OR_RETURN(n->right, get_bool(c, "strip_right", true));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Replace") {
    GB_RETURN_IF_ERROR(check_fields(c, {"pattern", "content"}));
    auto n = std::make_unique<ReplaceNormalizer>();
    GB_ASSIGN_OR_RETURN(n->pattern, get_pattern(c.at("pattern")));
    GB_ASSIGN_OR_RETURN(n->content, get_string(c, "content", std::nullopt));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Prepend") {
    GB_RETURN_IF_ERROR(check_fields(c, {"prepend"}));
    auto n = std::make_unique<PrependNormalizer>();
    GB_ASSIGN_OR_RETURN(n->prepend_, get_string(c, "prepend", std::nullopt));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Nmt") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Normalizer>(std::make_unique<NmtNormalizer>());
  }
  if (type == "ByteLevel") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<Normalizer>(std::make_unique<ByteLevelNormalizer>());
  }
  if (type == "Sequence") {
    GB_RETURN_IF_ERROR(check_fields(c, {"normalizers"}));
    auto n = std::make_unique<SequenceNormalizer>();
    GB_RETURN_IF_ERROR(load_items(c, "normalizers", load_normalizer, n->items));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Precompiled") {
    GB_RETURN_IF_ERROR(check_fields(c, {"precompiled_charsmap"}));
    JsonCtx f = c.at("precompiled_charsmap");
    if (!f.j.is_string()) return f.err("expected a base64 string (the SentencePiece charsmap)");
    auto blob = base64_decode(f.j.get_ref<const std::string&>());
    if (!blob) return f.err("invalid base64");
    auto n = std::make_unique<PrecompiledNormalizer>();
    auto parsed = CharsMap::parse(*blob);
    if (!parsed.ok()) return f.err(parsed.error().what);
    n->map = std::move(parsed).value();
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  return c.at("type").err("unknown \"" + type + "\"");
}

}  // namespace glassbox::tok
