#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"
#include "tokenizer/text.h"

#include <pcre2.h>

namespace glassbox::tok {

namespace {
// Oniguruma's \s is Unicode White_Space; PCRE2's UCP \s misses U+0085 and U+180E handling
// differs, so spell the set out.
constexpr const char* kSpaceSet =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}";
constexpr const char* kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";

std::string rewrite(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[i + 1];
      if (n == 's' || n == 'w') {
        const char* set = n == 's' ? kSpaceSet : kWordSet;
        if (in_class) out += set;
        else out += std::string("[") + set + "]";
        ++i;
        continue;
      }
      if ((n == 'S' || n == 'W') && !in_class) {
        out += std::string("[^") + (n == 'S' ? kSpaceSet : kWordSet) + "]";
        ++i;
        continue;
      }
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') { out += '^'; ++i; }
      if (i + 1 < p.size() && p[i + 1] == ']') { out += ']'; ++i; }
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}
}  // namespace

Result<std::shared_ptr<Regex>> Regex::compile(const std::string& pattern) {
  std::string rewritten = rewrite(pattern);
  int errcode = 0;
  PCRE2_SIZE erroff = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &errcode, &erroff, nullptr);
  if (!code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(errcode, buf, sizeof(buf));
    return make_error(ErrorCode::kInvalidModel,
                      "regex does not compile: " + std::string(reinterpret_cast<char*>(buf)) + " at offset " +
                          std::to_string(erroff),
                      "", "check the pattern; glassbox uses PCRE2 with UTF and UCP");
  }
  std::shared_ptr<Regex> r(new Regex());
  r->pattern_ = pattern;
  r->code_ = code;
  r->jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  pcre2_match_context* mctx = pcre2_match_context_create(nullptr);
  // Bounded work per match: catastrophic patterns such as (a+)+ fail instead of hanging.
  pcre2_set_match_limit(mctx, 10'000'000);
  pcre2_set_depth_limit(mctx, 100'000);
  r->mctx_ = mctx;
  return r;
}

Regex::~Regex() {
  if (code_) pcre2_code_free(static_cast<pcre2_code*>(code_));
  if (mctx_) pcre2_match_context_free(static_cast<pcre2_match_context*>(mctx_));
}

Status Regex::find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const {
  auto* code = static_cast<pcre2_code*>(code_);
  auto* mctx = static_cast<pcre2_match_context*>(mctx_);
  // One match block per thread, freed when the thread exits (pool threads come and go with sessions).
  struct MatchData {
    pcre2_match_data* md = nullptr;
    std::uint32_t pairs = 0;
    ~MatchData() {
      if (md) pcre2_match_data_free(md);
    }
  };
  thread_local MatchData tls;
  std::uint32_t need = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &need);
  need += 1;
  if (!tls.md || tls.pairs < need) {
    if (tls.md) pcre2_match_data_free(tls.md);
    tls.md = pcre2_match_data_create(need < 16 ? 16 : need, nullptr);
    tls.pairs = need < 16 ? 16 : need;
  }
  pcre2_match_data* md = tls.md;
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  std::uint32_t options = 0;
  while (start <= text.size()) {
    int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), start, options | PCRE2_NO_UTF_CHECK, md, mctx)
                  : pcre2_match(code, subject, text.size(), start, options | PCRE2_NO_UTF_CHECK, md, mctx);
    if (rc == PCRE2_ERROR_NOMATCH) {
      if (options == 0) break;
      // after an empty match: advance one char and retry normally
      if (start >= text.size()) break;
      start += utf8_len_lead(static_cast<unsigned char>(text[start]));
      options = 0;
      continue;
    }
    if (rc < 0) {
      return make_error(ErrorCode::kLimitExceeded, "regex match limit reached (pattern " + pattern_ + ")", "",
                        "the input makes this pattern backtrack catastrophically; shorten the input");
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    std::size_t s = ov[0], e = ov[1];
    out.emplace_back(s, e);
    if (s == e) {
      options = PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED;
      start = e;
    } else {
      options = 0;
      start = e;
    }
  }
  return Status();
}

}  // namespace glassbox::tok
