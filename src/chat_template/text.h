// Python str operations on UTF-8 text, shared by string methods and filters.
#pragma once

#include <string>
#include <vector>

#include "chat_template/value.h"

namespace glassbox::chat_template {

// str.strip/lstrip/rstrip: `chars` null = whitespace.
std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit: `sep` null = runs of whitespace.
Result<std::vector<std::string>> py_split(const std::string& s, const std::string* sep, std::int64_t maxsplit,
                                          bool from_right);
std::vector<std::string> py_splitlines(const std::string& s, bool keepends);
std::string py_replace(const std::string& s, const std::string& old, const std::string& repl, std::int64_t count);
// upper/lower/title/capitalize/swapcase; refused for text with non-ASCII cased letters (Python
// applies full Unicode case mapping, which glassbox does not carry).
Result<std::string> py_case(const std::string& s, const std::string& how);
// Jinja's |title filter (word starts after -, whitespace, (, {, [, <).
Result<std::string> jinja_title(const std::string& s);
std::int64_t py_count(const std::string& s, const std::string& sub);
// str.find in code points (-1 when absent).
std::int64_t py_find(const std::string& s, const std::string& sub, bool from_right);

}  // namespace glassbox::chat_template
