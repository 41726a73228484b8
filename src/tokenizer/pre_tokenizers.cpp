// Pre-tokenizers of tokenizer.json ("pre_tokenizer" field).
#include <array>

#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include "tokenizer/components.h"

namespace glassbox::tok {
namespace {

template <class F>
void char_matches(std::string_view text, F pred, std::vector<Match>& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  std::size_t last = 0;
  for (std::size_t i = 0; i < text.size();) {
    int len;
    char32_t c = utf8_decode(text, i, len);
    if (pred(c)) {
      if (last < i) out.push_back({last, i, false});
      out.push_back({i, i + len, true});
      last = i + len;
    }
    i += len;
  }
  if (text.size() > last) out.push_back({last, text.size(), false});
}

template <class F>
Status split_chars(std::vector<Piece>& pieces, F pred, SplitBehavior b) {
  return split_pieces(pieces, [&](const NStr& ns, std::vector<NStr>& out) -> Status {
    thread_local std::vector<Match> ms;
    char_matches(ns.norm, pred, ms);
    split_by_matches(ns, ms, b, out);
    return Status();
  });
}

void invert(std::vector<Match>& ms) {
  for (auto& m : ms) m.is_match = !m.is_match;
}

bool is_bert_punc(char32_t c) { return is_ascii_punctuation(c) || is_punctuation(c); }

// Maps every byte of the piece to its byte-level char (HF ByteLevel pre-tokenizer, step 2).
// Each output char is aligned like its byte's char (continuation bytes like the char's last byte).
void byte_level_map(NStr& ns) {
  struct Chars {
    std::array<std::array<char, 2>, 256> bytes;
    std::array<std::uint8_t, 256> len;
  };
  static const Chars table = [] {
    Chars t{};
    for (int b = 0; b < 256; ++b) {
      std::string u;
      utf8_append(u, byte_to_char(static_cast<unsigned char>(b)));
      t.len[b] = static_cast<std::uint8_t>(u.size());  // the alphabet is U+0021..U+0143: 1 or 2 bytes
      for (std::size_t k = 0; k < u.size(); ++k) t.bytes[b][k] = u[k];
    }
    return t;
  }();
  const std::string& in = ns.norm;
  std::string out;
  out.resize(in.size() * 2);
  std::vector<Align> al(in.size() * 2);
  std::size_t o = 0;
  for (std::size_t p = 0; p < in.size();) {
    int len = utf8_len_lead(static_cast<unsigned char>(in[p]));
    for (int k = 0; k < len; ++k) {
      unsigned char b = static_cast<unsigned char>(in[p + k]);
      Align a = k == 0 ? ns.align[p] : ns.align[p + len - 1];
      for (std::uint8_t j = 0; j < table.len[b]; ++j) {
        out[o] = table.bytes[b][j];
        al[o++] = a;
      }
    }
    p += len;
  }
  out.resize(o);
  al.resize(o);
  ns.norm = std::move(out);
  ns.align = std::move(al);
}

class ByteLevelPre : public PreTokenizer {
 public:
  bool add_prefix_space = true, use_regex = true;
  std::shared_ptr<Regex> re;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    GB_RETURN_IF_ERROR(split_pieces(pieces, [&](NStr& ns, std::vector<NStr>& out) -> Status {
      // split_pieces drops the input piece afterwards, so it is modified in place
      if (add_prefix_space && ns.norm[0] != ' ') prepend(ns, " ");
      if (!use_regex) {
        out.push_back(std::move(ns));
        return Status();
      }
      thread_local std::vector<Match> ms;
      PatternSpec p;
      p.is_regex = true;
      p.regex = re;
      GB_RETURN_IF_ERROR(find_pattern(p, ns.norm, ms));
      split_by_matches(ns, ms, SplitBehavior::kIsolated, out);
      return Status();
    }));
    for (Piece& p : pieces)
      if (!p.done) byte_level_map(p.ns);
    return Status();
  }
};

class SplitPre : public PreTokenizer {
 public:
  PatternSpec pattern;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert_ = false;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_pieces(pieces, [&](const NStr& ns, std::vector<NStr>& out) -> Status {
      thread_local std::vector<Match> ms;
      GB_RETURN_IF_ERROR(find_pattern(pattern, ns.norm, ms));
      if (invert_) invert(ms);
      split_by_matches(ns, ms, behavior, out);
      return Status();
    });
  }
};

class MetaspacePre : public PreTokenizer {
 public:
  char32_t replacement = U'\u2581';
  std::string rep;
  enum class Scheme { kAlways, kFirst, kNever } scheme = Scheme::kAlways;
  bool split = true;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_pieces(pieces, [&](NStr& ns, std::vector<NStr>& out) -> Status {
      // replace ' ' by the replacement (each gets the space's alignment)
      if (ns.norm.find(' ') != std::string::npos) {
        std::string o;
        std::vector<Align> al;
        o.reserve(ns.norm.size() + 8);
        al.reserve(ns.norm.size() + 8);
        for (std::size_t i = 0; i < ns.norm.size(); ++i) {
          if (ns.norm[i] == ' ') {
            o.append(rep);
            al.insert(al.end(), rep.size(), ns.align[i]);
          } else {
            o.push_back(ns.norm[i]);
            al.push_back(ns.align[i]);
          }
        }
        ns.norm = std::move(o);
        ns.align = std::move(al);
      }
      bool starts = ns.norm.compare(0, rep.size(), rep) == 0;
      if (scheme == Scheme::kAlways && !starts) prepend(ns, rep);
      if (scheme == Scheme::kFirst && !starts && ns.orig_start == 0) prepend(ns, rep);
      if (!split) {
        out.push_back(std::move(ns));
        return Status();
      }
      thread_local std::vector<Match> ms;
      char32_t r = replacement;
      char_matches(ns.norm, [r](char32_t c) { return c == r; }, ms);
      split_by_matches(ns, ms, SplitBehavior::kMergedWithNext, out);
      return Status();
    });
  }
};

// Fast path of BertPreTokenizer: its two splits (whitespace removed, then punctuation
// isolated) in one pass over the piece, with an ASCII class table.
void split_words_and_punctuation(const NStr& ns, std::vector<NStr>& out) {
  enum : std::uint8_t { kWord, kSpace, kPunct };
  static const std::array<std::uint8_t, 128> ascii = [] {
    std::array<std::uint8_t, 128> t{};
    for (char32_t c = 0; c < 128; ++c) t[c] = is_whitespace(c) ? kSpace : is_bert_punc(c) ? kPunct : kWord;
    return t;
  }();
  const std::string& s = ns.norm;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t word = kNone;
  for (std::size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    int len = 1;
    std::uint8_t kind;
    if (b < 0x80) {
      kind = ascii[b];
    } else {
      char32_t c = utf8_decode(s, i, len);
      kind = is_whitespace(c) ? kSpace : is_bert_punc(c) ? kPunct : kWord;
    }
    if (kind == kWord) {
      if (word == kNone) word = i;
    } else {
      if (word != kNone) out.push_back(ns.slice(word, i));
      word = kNone;
      if (kind == kPunct) out.push_back(ns.slice(i, i + static_cast<std::size_t>(len)));
    }
    i += static_cast<std::size_t>(len);
  }
  if (word != kNone) out.push_back(ns.slice(word, s.size()));
}

class BertPre : public PreTokenizer {
 public:
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    if (fast_paths_enabled())
      return split_pieces(pieces, [](const NStr& ns, std::vector<NStr>& out) -> Status {
        split_words_and_punctuation(ns, out);
        return Status();
      });
    GB_RETURN_IF_ERROR(split_chars(pieces, [](char32_t c) { return is_whitespace(c); }, SplitBehavior::kRemoved));
    return split_chars(pieces, is_bert_punc, SplitBehavior::kIsolated);
  }
};

class WhitespacePre : public PreTokenizer {
 public:
  std::shared_ptr<Regex> re;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_pieces(pieces, [&](const NStr& ns, std::vector<NStr>& out) -> Status {
      thread_local std::vector<Match> ms;
      PatternSpec p;
      p.is_regex = true;
      p.regex = re;
      GB_RETURN_IF_ERROR(find_pattern(p, ns.norm, ms));
      invert(ms);
      split_by_matches(ns, ms, SplitBehavior::kRemoved, out);
      return Status();
    });
  }
};

class WhitespaceSplitPre : public PreTokenizer {
 public:
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, [](char32_t c) { return is_whitespace(c); }, SplitBehavior::kRemoved);
  }
};

class PunctuationPre : public PreTokenizer {
 public:
  SplitBehavior behavior = SplitBehavior::kIsolated;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, is_bert_punc, behavior);
  }
};

class DigitsPre : public PreTokenizer {
 public:
  bool individual = false;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_chars(pieces, [](char32_t c) { return is_numeric(c); },
                       individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
  }
};

class CharDelimiterPre : public PreTokenizer {
 public:
  char32_t delim = ' ';
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    char32_t d = delim;
    return split_chars(pieces, [d](char32_t c) { return c == d; }, SplitBehavior::kRemoved);
  }
};

class FixedLengthPre : public PreTokenizer {
 public:
  std::size_t length = 5;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_pieces(pieces, [&](const NStr& ns, std::vector<NStr>& out) -> Status {
      std::size_t start = 0, n = 0;
      for (std::size_t i = 0; i < ns.norm.size();) {
        i += utf8_len_lead(static_cast<unsigned char>(ns.norm[i]));
        if (++n == length) {
          out.push_back(ns.slice(start, i));
          start = i;
          n = 0;
        }
      }
      if (start < ns.norm.size()) out.push_back(ns.slice(start, ns.norm.size()));
      return Status();
    });
  }
};

// HF UnicodeScripts: splits where the script changes. HF's script table is SentencePiece's,
// generated from Unicode 9.0 Scripts.txt: chars assigned later have no script there ("Any",
// never split on), so we take ICU's script only for chars whose Unicode age is <= 9.0.
// SentencePiece's fix-ups: U+30FC, Hiragana and Katakana count as Han; ' ' is Any.
// tests/tokenizer checks every code point against the peer.
constexpr int kScriptAny = -1;
int hf_script(char32_t c) {
  if (c == 0x30FC) return USCRIPT_HAN;
  if (c == ' ') return kScriptAny;
  if (c < 0x80) {
    const bool latin = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    return latin ? USCRIPT_LATIN : USCRIPT_COMMON;
  }
  // Chars whose script changed after Unicode 9.0 (ICU has the new value); found by the
  // all-code-point golden test against the peer (tests/tokenizer, scripts-wordlevel).
  switch (c) {
    case 0x0589: return USCRIPT_COMMON;     // ARMENIAN FULL STOP: Armenian since Unicode 12
    case 0x061C: return USCRIPT_COMMON;     // ARABIC LETTER MARK: Arabic in ICU's data
    case 0x0953: case 0x0954: return USCRIPT_DEVANAGARI;  // DEVANAGARI GRAVE/ACUTE ACCENT: Inherited in ICU's data
    default: break;
  }
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  if (age[0] == 0 || age[0] > 9) return kScriptAny;  // unassigned, or assigned after Unicode 9.0
  UErrorCode st = U_ZERO_ERROR;
  const int s = uscript_getScript(static_cast<UChar32>(c), &st);
  if (U_FAILURE(st) || s == USCRIPT_UNKNOWN) return kScriptAny;
  if (s == USCRIPT_HIRAGANA || s == USCRIPT_KATAKANA) return USCRIPT_HAN;
  return s;
}

class UnicodeScriptsPre : public PreTokenizer {
 public:
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    return split_pieces(pieces, [&](const NStr& ns, std::vector<NStr>& out) -> Status {
      // Split offsets as HF computes them: a piece starts at each char whose script differs from
      // the last non-Any script. Leading Any chars belong to no piece (HF drops them), and a
      // piece of only Any chars vanishes.
      std::vector<std::size_t> starts;
      bool have_last = false;
      int last = kScriptAny;
      for (std::size_t i = 0; i < ns.norm.size();) {
        int len;
        const int s = hf_script(utf8_decode(ns.norm, i, len));
        if (s != kScriptAny && (!have_last || last != s)) starts.push_back(i);
        if (s != kScriptAny) {
          last = s;
          have_last = true;
        }
        i += len;
      }
      starts.push_back(ns.norm.size());
      for (std::size_t k = 0; k + 1 < starts.size(); ++k) out.push_back(ns.slice(starts[k], starts[k + 1]));
      return Status();
    });
  }
};

class SequencePre : public PreTokenizer {
 public:
  std::vector<std::unique_ptr<PreTokenizer>> items;
  Status pre_tokenize(std::vector<Piece>& pieces) const override {
    for (auto& p : items) GB_RETURN_IF_ERROR(p->pre_tokenize(pieces));
    return Status();
  }
};

Result<char32_t> get_char(const JsonCtx& c, const std::string& key, std::optional<char32_t> dflt) {
  GB_ASSIGN_OR_RETURN(std::string s, get_string(c, key, dflt ? std::optional<std::string>("") : std::nullopt));
  if (s.empty() && dflt) return *dflt;
  if (utf8_first_invalid(s) != std::string::npos || utf8_count(s) != 1)
    return c.at(key).err("expected exactly one character, got \"" + s + "\"");
  int len;
  return utf8_decode(s, 0, len);
}

}  // namespace

const char* const kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Result<std::unique_ptr<PreTokenizer>> load_pre_tokenizer(const JsonCtx& c) {
  if (!c.j.is_object()) return c.err("expected an object");
  GB_ASSIGN_OR_RETURN(std::string type, get_string(c, "type", std::nullopt));
  if (type == "ByteLevel") {
    GB_RETURN_IF_ERROR(check_fields(c, {"add_prefix_space", "trim_offsets", "use_regex"}));
    auto p = std::make_unique<ByteLevelPre>();
    GB_ASSIGN_OR_RETURN(p->add_prefix_space, get_bool(c, "add_prefix_space", true));
    GB_ASSIGN_OR_RETURN(p->use_regex, get_bool(c, "use_regex", true));
    GB_ASSIGN_OR_RETURN(bool trim, get_bool(c, "trim_offsets", true));
    (void)trim;  // only meaningful for the post-processor
    GB_ASSIGN_OR_RETURN(p->re, Regex::compile(kByteLevelPattern));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Split") {
    GB_RETURN_IF_ERROR(check_fields(c, {"pattern", "behavior", "invert"}));
    auto p = std::make_unique<SplitPre>();
    GB_ASSIGN_OR_RETURN(p->pattern, get_pattern(c.at("pattern")));
    GB_ASSIGN_OR_RETURN(p->behavior, parse_behavior(c.at("behavior")));
    GB_ASSIGN_OR_RETURN(p->invert_, get_bool(c, "invert", false));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Metaspace") {
    GB_RETURN_IF_ERROR(check_fields(c, {"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}));
    auto p = std::make_unique<MetaspacePre>();
    GB_ASSIGN_OR_RETURN(p->replacement, get_char(c, "replacement", std::nullopt));
    p->rep.clear();
    utf8_append(p->rep, p->replacement);
    GB_ASSIGN_OR_RETURN(p->split, get_bool(c, "split", true));
    JsonCtx ps = c.at("prepend_scheme");
    if (!ps.j.is_null()) {
      GB_ASSIGN_OR_RETURN(std::string s, get_string(c, "prepend_scheme", std::nullopt));
      if (s == "always") p->scheme = MetaspacePre::Scheme::kAlways;
      else if (s == "first") p->scheme = MetaspacePre::Scheme::kFirst;
      else if (s == "never") p->scheme = MetaspacePre::Scheme::kNever;
      else return ps.err("unknown \"" + s + "\"");
    } else {
      GB_ASSIGN_OR_RETURN(bool aps, get_bool(c, "add_prefix_space", true));
      p->scheme = aps ? MetaspacePre::Scheme::kAlways : MetaspacePre::Scheme::kNever;
    }
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "BertPreTokenizer") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<PreTokenizer>(std::make_unique<BertPre>());
  }
  if (type == "Whitespace") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    auto p = std::make_unique<WhitespacePre>();
    GB_ASSIGN_OR_RETURN(p->re, Regex::compile(R"(\w+|[^\w\s]+)"));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "WhitespaceSplit") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<PreTokenizer>(std::make_unique<WhitespaceSplitPre>());
  }
  if (type == "Punctuation") {
    GB_RETURN_IF_ERROR(check_fields(c, {"behavior"}));
    auto p = std::make_unique<PunctuationPre>();
    if (!c.at("behavior").j.is_null()) {
      GB_ASSIGN_OR_RETURN(p->behavior, parse_behavior(c.at("behavior")));
    }
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Digits") {
    GB_RETURN_IF_ERROR(check_fields(c, {"individual_digits"}));
    auto p = std::make_unique<DigitsPre>();
    GB_ASSIGN_OR_RETURN(p->individual, get_bool(c, "individual_digits", false));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "CharDelimiterSplit") {
    GB_RETURN_IF_ERROR(check_fields(c, {"delimiter"}));
    auto p = std::make_unique<CharDelimiterPre>();
    GB_ASSIGN_OR_RETURN(p->delim, get_char(c, "delimiter", std::nullopt));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "FixedLength") {
    GB_RETURN_IF_ERROR(check_fields(c, {"length"}));
    auto p = std::make_unique<FixedLengthPre>();
    GB_ASSIGN_OR_RETURN(std::int64_t len, get_int(c, "length", 5));
    if (len <= 0) return c.at("length").err("must be > 0, got " + std::to_string(len));
    p->length = static_cast<std::size_t>(len);
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Sequence") {
    GB_RETURN_IF_ERROR(check_fields(c, {"pretokenizers"}));
    auto p = std::make_unique<SequencePre>();
    GB_RETURN_IF_ERROR(load_items(c, "pretokenizers", load_pre_tokenizer, p->items));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "UnicodeScripts") {
    GB_RETURN_IF_ERROR(check_fields(c, {}));
    return std::unique_ptr<PreTokenizer>(std::make_unique<UnicodeScriptsPre>());
  }
  return c.at("type").err("unknown \"" + type + "\"");
}

}  // namespace glassbox::tok
