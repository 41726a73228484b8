#include "generation/text_stream.h"

#include <algorithm>

namespace glassbox::generation {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Bytes at the end of `s` that may still change: trailing U+FFFD (a character whose remaining
// bytes are in the next token) and the longest tail that is a proper prefix of a stop string.
size_t held_tail(std::string_view s, const std::vector<std::string>& stops) {
  size_t held = 0;
  while (s.size() - held >= kReplacement.size() &&
         s.substr(s.size() - held - kReplacement.size(), kReplacement.size()) == kReplacement)
    held += kReplacement.size();
  std::string_view rest = s.substr(0, s.size() - held);
  size_t stop_tail = 0;
  for (const auto& stop : stops)
    for (size_t n = std::min(stop.size() - 1, rest.size()); n > stop_tail; --n)
      if (rest.substr(rest.size() - n) == std::string_view(stop).substr(0, n)) {
        stop_tail = n;
        break;
      }
  return held + stop_tail;
}

}  // namespace

TextStream::TextStream(const Tokenizer* tokenizer, bool skip_special_tokens, std::vector<std::string> stop_strings)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens), stops_(std::move(stop_strings)) {}

Result<std::string> TextStream::push(uint32_t id) {
  if (stop_) return std::string();
  ids_.push_back(id);
  GB_ASSIGN_OR_RETURN(decoded_, tokenizer_->decode(ids_, skip_special_));
  // Decoding a longer id list may rewrite the end of what a shorter one gave (a decoder that
  // strips or merges at the end); text already handed out is never taken back, so continue after it.
  const size_t from = decoded_.compare(0, emitted_.size(), emitted_) == 0 ? emitted_.size() : decoded_.size();
  std::string_view fresh = std::string_view(decoded_).substr(from);
  // The earliest stop string that appears in the unreleased text ends the generation there.
  size_t cut = std::string_view::npos;
  for (const auto& s : stops_) {
    // A stop may begin in the held tail of earlier text: search from where the unreleased text starts.
    const size_t at = fresh.find(s);
    if (at != std::string_view::npos && (cut == std::string_view::npos || at < cut)) {
      cut = at;
      stop_ = s;
    }
  }
  if (cut != std::string_view::npos) {
    std::string out(fresh.substr(0, cut));
    emitted_ += out;
    return out;
  }
  std::string out(fresh.substr(0, fresh.size() - held_tail(fresh, stops_)));
  emitted_ += out;
  return out;
}

std::string TextStream::finish() {
  if (stop_) return std::string();
  const size_t from = decoded_.compare(0, emitted_.size(), emitted_) == 0 ? emitted_.size() : decoded_.size();
  std::string out = decoded_.substr(from);
  emitted_ += out;
  return out;
}

}  // namespace glassbox::generation
