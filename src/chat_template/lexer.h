// Splits a chat template into tokens as Jinja2's lexer does with Hugging Face's settings
// (trim_blocks, lstrip_blocks, keep_trailing_newline=False, newlines normalised to "\n"):
// template data, {{ }} / {% %} delimiters, and the expression tokens between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::chat_template {

struct Pos {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in characters (code points)
};
std::string pos_string(const Pos& p);  // "line 3:14"

enum class Tok {
  kData,        // template text (whitespace control already applied)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // value: the decoded literal
  kInteger,     // value: the digits (underscores removed)
  kFloat,
  kOperator,    // value: "+", "//", "==", "(", ...
  kEof,
};

struct Token {
  Tok type;
  std::string value;
  Pos pos;
};

// Whitespace options of the environment; Hugging Face sets both to true.
struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

Result<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options = {});

}  // namespace glassbox::chat_template
