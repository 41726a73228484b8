// One `glassbox encode` output line, written with the fast JSON writer (core/jsonl.h). The bytes equal what
// nlohmann::json (std::map, so keys in sorted order) dumped before: tests/jsonl/encoding_json_test.cpp keeps
// that reference and compares byte for byte.
#pragma once

#include <string>

#include "core/jsonl.h"
#include "glassbox/tokenizer.h"

namespace glassbox::cli {

inline void append_encoding(std::string& out, const Encoding& e, bool with_overflow) {
  out += "{\"attention_mask\":";
  jsonl::append_uint_array(out, e.attention_mask);
  out += ",\"ids\":";
  jsonl::append_uint_array(out, e.ids);
  out += ",\"offsets\":";
  jsonl::append_pair_array(out, e.offsets);
  if (with_overflow) {
    out += ",\"overflowing\":[";
    for (std::size_t i = 0; i < e.overflowing.size(); ++i) {
      if (i) out += ',';
      append_encoding(out, e.overflowing[i], false);
    }
    out += ']';
  }
  out += ",\"special_tokens_mask\":";
  jsonl::append_uint_array(out, e.special_tokens_mask);
  out += ",\"tokens\":";
  jsonl::append_string_array(out, e.tokens);
  out += ",\"type_ids\":";
  jsonl::append_uint_array(out, e.type_ids);
  out += '}';
}

}  // namespace glassbox::cli
