// The one UTF-8 encoder: a code point appended as 1-4 bytes. Used by the tokenizer, the chat-template
// interpreter, the JSON-lines reader and the text probes, so they cannot disagree on an encoding.
#pragma once

#include <string>

namespace glassbox {

// Appends `c` as UTF-8. The caller passes a Unicode scalar value (no check here: the decoders that
// produce code points reject surrogates and values past U+10FFFF before they get this far).
inline void utf8_append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace glassbox
