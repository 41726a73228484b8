// PCRE2 (UTF + UCP, JIT when available) wrapper: compiled once at load, bounded matching.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::tok {

class Regex {
 public:
  // Compiles an Oniguruma-style pattern as used in tokenizer.json (\s and \w are rewritten
  // to the Unicode White_Space / word sets Oniguruma uses).
  static Result<std::shared_ptr<Regex>> compile(const std::string& pattern);
  ~Regex();
  // Every non-overlapping match [start, end) in `text` (empty matches included, as
  // Oniguruma's find_iter yields them). Fails only when a match limit is hit.
  Status find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const;
  const std::string& pattern() const { return pattern_; }

 private:
  Regex() = default;
  std::string pattern_;
  void* code_ = nullptr;   // pcre2_code*
  void* mctx_ = nullptr;   // pcre2_match_context*
  bool jit_ = false;
};

}  // namespace glassbox::tok
