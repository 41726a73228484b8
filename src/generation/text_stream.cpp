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

// The text `window` adds after its context `prefix`. A decoder may rewrite the end of the context
// when more ids follow; text already handed out is never taken back, so continue after the common part.
std::string_view added_text(std::string_view window, std::string_view prefix) {
  size_t common = 0;
  while (common < prefix.size() && common < window.size() && window[common] == prefix[common]) ++common;
  return window.substr(common);
}

}  // namespace

TextStream::TextStream(const Tokenizer* tokenizer, bool skip_special_tokens, std::vector<std::string> stop_strings)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens), stops_(std::move(stop_strings)) {}

Result<std::string> TextStream::push(uint32_t id) {
  if (stop_) return std::string();
  window_.push_back(id);
  GB_ASSIGN_OR_RETURN(decoded_, tokenizer_->decode(window_, skip_special_));
  // No new complete text yet: nothing beyond the context, or a character still open (held as
  // DecodeStream holds it). The window grows until the next token completes it.
  if (decoded_.size() <= prefix_.size() || std::string_view(decoded_).ends_with(kReplacement)) return std::string();
  pending_ += added_text(decoded_, prefix_);
  // The tokens decoded since the last emission become the next push's context.
  window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(prefix_ids_));
  prefix_ids_ = window_.size();
  GB_ASSIGN_OR_RETURN(prefix_, tokenizer_->decode(window_, skip_special_));
  decoded_ = prefix_;
  return release(false);
}

std::string TextStream::release(bool final) {
  // The earliest stop string in the unreleased text ends the generation there (a stop may begin in
  // the tail held at an earlier push: pending_ starts where the handed-out text ends).
  size_t cut = std::string::npos;
  for (const auto& s : stops_) {
    const size_t at = pending_.find(s);
    if (at != std::string::npos && (cut == std::string::npos || at < cut)) {
      cut = at;
      stop_ = s;
    }
  }
  std::string out;
  if (cut != std::string::npos) {
    out = pending_.substr(0, cut);
    pending_.clear();
    window_.clear();
  } else {
    out = pending_.substr(0, pending_.size() - (final ? 0 : held_tail(pending_, stops_)));
    pending_.erase(0, out.size());
  }
  emitted_ += out;
  return out;
}

std::string TextStream::finish() {
  if (stop_) return std::string();
  // Held bytes of an unfinished character come out as U+FFFD, as a full decode gives them.
  if (decoded_.size() > prefix_.size()) pending_ += added_text(decoded_, prefix_);
  window_.clear();
  prefix_ids_ = 0;
  prefix_.clear();
  decoded_.clear();
  return release(true);
}

}  // namespace glassbox::generation
