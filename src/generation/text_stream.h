// Generated ids -> text that is final, decoded incrementally: each token decodes only a bounded
// window of ids (Hugging Face tokenizers' DecodeStream / TGI's "prefix offset, read offset"), never
// all ids again. The window holds the tokens since the emission before last, so a decoder that
// depends on its neighbour (a Metaspace leading space, a byte sequence) sees the same context as a
// full decode. Bytes of a character not yet complete (a trailing U+FFFD) and a tail that could
// still become a stop string are held back until the next token decides them; a stop string ends
// the text before it. The pieces add up to the decoding of all ids.
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
  // Ids the last push decoded (bounded by the tokens of two emissions, not by the output's length).
  size_t window_size() const { return window_.size(); }

 private:
  // Hands out pending_ up to the earliest stop string, keeping a tail that may begin one (unless final).
  std::string release(bool final);

  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::vector<std::string> stops_;
  std::vector<uint32_t> window_;  // ids decoded at each push
  size_t prefix_ids_ = 0;         // window_[0, prefix_ids_) is context whose text was already taken
  std::string prefix_;            // the decoding of that context
  std::string decoded_;           // the decoding of window_ at the last push
  std::string pending_;           // complete text not yet handed out (it may begin a stop string)
  std::string emitted_;           // all text handed out
  std::optional<std::string> stop_;
};

}  // namespace glassbox::generation
