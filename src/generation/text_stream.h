// Generated ids -> text that is final: bytes of a character not yet complete (a trailing U+FFFD
// from the decoder) and a tail that could still become a stop string are held back until the next
// token decides them; a stop string ends the text before it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

namespace glassbox::generation {

class TextStream {
 public:
  TextStream(const Tokenizer* tokenizer, bool skip_special_tokens, std::vector<std::string> stop_strings);
  // Adds a generated id; returns the text that became final (empty while held).
  Result<std::string> push(uint32_t id);
  // The end of generation: whatever was held (partial bytes as U+FFFD), unless a stop string ended it.
  std::string finish();
  const std::optional<std::string>& stop_string() const { return stop_; }
  const std::string& text() const { return emitted_; }  // all final text so far

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::vector<std::string> stops_;
  std::vector<uint32_t> ids_;
  std::string decoded_;   // the decoding of ids_ (re-decoded whole at each push)
  std::string emitted_;   // prefix of decoded_ handed out
  std::optional<std::string> stop_;
};

}  // namespace glassbox::generation
