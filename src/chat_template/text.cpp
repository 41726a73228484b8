// Python str operations on UTF-8 text (see text.h).
#include "chat_template/text.h"

#include <algorithm>

namespace glassbox::chat_template {

std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  auto cps = decode_utf8(s);
  std::vector<char32_t> set;
  if (chars) set = decode_utf8(*chars);
  auto strip_it = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : py_isspace(c);
  };
  std::size_t a = 0, b = cps.size();
  if (left)
    while (a < b && strip_it(cps[a])) ++a;
  if (right)
    while (b > a && strip_it(cps[b - 1])) --b;
  return encode_utf8(std::vector<char32_t>(cps.begin() + static_cast<std::ptrdiff_t>(a),
                                           cps.begin() + static_cast<std::ptrdiff_t>(b)));
}

Result<std::vector<std::string>> py_split(const std::string& s, const std::string* sep, std::int64_t maxsplit,
                                          bool from_right) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) return make_error(ErrorCode::kInvalidArgument, "ValueError: empty separator");
    if (!from_right) {
      std::size_t pos = 0;
      while (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit) {
        std::size_t k = s.find(*sep, pos);
        if (k == std::string::npos) break;
        out.push_back(s.substr(pos, k - pos));
        pos = k + sep->size();
      }
      out.push_back(s.substr(pos));
    } else {
      std::size_t end = s.size();
      std::int64_t splits = 0;
      while (maxsplit < 0 || splits < maxsplit) {
        if (end < sep->size()) break;
        std::size_t k = s.rfind(*sep, end - sep->size());
        if (k == std::string::npos) break;
        out.push_back(s.substr(k + sep->size(), end - k - sep->size()));
        end = k;
        ++splits;
      }
      out.push_back(s.substr(0, end));
      std::reverse(out.begin(), out.end());
    }
    return out;
  }
  auto cps = decode_utf8(s);
  std::vector<std::pair<std::size_t, std::size_t>> words;  // [a, b) in code points
  std::size_t k = 0;
  while (k < cps.size()) {
    while (k < cps.size() && py_isspace(cps[k])) ++k;
    if (k == cps.size()) break;
    std::size_t a = k;
    while (k < cps.size() && !py_isspace(cps[k])) ++k;
    words.emplace_back(a, k);
  }
  auto piece = [&](std::size_t a, std::size_t b) {
    return encode_utf8(std::vector<char32_t>(cps.begin() + static_cast<std::ptrdiff_t>(a),
                                             cps.begin() + static_cast<std::ptrdiff_t>(b)));
  };
  if (maxsplit < 0 || static_cast<std::size_t>(maxsplit) >= words.size()) {
    for (auto [a, b] : words) out.push_back(piece(a, b));
    return out;
  }
  auto m = static_cast<std::size_t>(maxsplit);
  if (!from_right) {
    for (std::size_t w = 0; w < m; ++w) out.push_back(piece(words[w].first, words[w].second));
    out.push_back(piece(words[m].first, cps.size()));  // the rest keeps its trailing whitespace
  } else {
    std::size_t first = words.size() - m;
    out.push_back(piece(0, words[first - 1].second));  // the rest keeps its leading whitespace
    for (std::size_t w = first; w < words.size(); ++w) out.push_back(piece(words[w].first, words[w].second));
  }
  return out;
}

std::vector<std::string> py_splitlines(const std::string& s, bool keepends) {
  auto cps = decode_utf8(s);
  std::vector<std::string> out;
  std::vector<char32_t> line;
  for (std::size_t k = 0; k < cps.size(); ++k) {
    char32_t c = cps[k];
    bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d || c == 0x1e ||
               c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) {
      line.push_back(c);
      continue;
    }
    if (keepends) line.push_back(c);
    if (c == '\r' && k + 1 < cps.size() && cps[k + 1] == '\n') {
      ++k;
      if (keepends) line.push_back('\n');
    }
    out.push_back(encode_utf8(line));
    line.clear();
  }
  if (!line.empty()) out.push_back(encode_utf8(line));
  return out;
}

std::string py_replace(const std::string& s, const std::string& old, const std::string& repl, std::int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `repl` between every character (and at both ends).
    auto cps = decode_utf8(s);
    std::int64_t done = 0;
    for (std::size_t k = 0; k <= cps.size(); ++k) {
      if (count < 0 || done < count) { out += repl; ++done; }
      if (k < cps.size()) append_utf8(out, cps[k]);
    }
    return out;
  }
  std::size_t pos = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    std::size_t k = s.find(old, pos);
    if (k == std::string::npos) break;
    out.append(s, pos, k - pos);
    out += repl;
    pos = k + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

namespace {

// Code points whose case mapping Python applies and glassbox does not carry.
bool non_ascii_cased(char32_t c) {
  return c == 0xb5 || (c >= 0xc0 && c <= 0x24f) || (c >= 0x370 && c <= 0x58f) || (c >= 0x10a0 && c <= 0x10ff) ||
         (c >= 0x13a0 && c <= 0x13ff) || (c >= 0x1c80 && c <= 0x1cbf) || (c >= 0x1d00 && c <= 0x1fff) ||
         (c >= 0x2100 && c <= 0x218f) || (c >= 0x24b6 && c <= 0x24e9) || (c >= 0x2c00 && c <= 0x2d2f) ||
         (c >= 0xa640 && c <= 0xa7ff) || (c >= 0xab70 && c <= 0xabbf) || (c >= 0xfb00 && c <= 0xfb06) ||
         (c >= 0xff21 && c <= 0xff5a) || (c >= 0x10400 && c <= 0x104ff) || (c >= 0x10c80 && c <= 0x10cff) ||
         (c >= 0x118a0 && c <= 0x118df) || (c >= 0x16e40 && c <= 0x16e9f) || (c >= 0x1e900 && c <= 0x1e95f);
}

bool is_upper(char32_t c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char32_t c) { return c >= 'a' && c <= 'z'; }
char32_t to_upper(char32_t c) { return is_lower(c) ? c - 32 : c; }
char32_t to_lower(char32_t c) { return is_upper(c) ? c + 32 : c; }

Status check_caseable(const std::vector<char32_t>& cps, const std::string& how) {
  for (char32_t c : cps)
    if (non_ascii_cased(c))
      return make_error(ErrorCode::kUnsupported,
                        "unsupported: " + how + "() of text with non-ASCII cased letters (Python applies Unicode case "
                        "mapping, which glassbox does not implement)");
  return Status();
}

}  // namespace

Result<std::string> py_case(const std::string& s, const std::string& how) {
  auto cps = decode_utf8(s);
  GB_RETURN_IF_ERROR(check_caseable(cps, how));
  if (how == "upper") for (auto& c : cps) c = to_upper(c);
  else if (how == "lower") for (auto& c : cps) c = to_lower(c);
  else if (how == "swapcase") for (auto& c : cps) c = is_upper(c) ? to_lower(c) : to_upper(c);
  else if (how == "capitalize") {
    for (std::size_t k = 0; k < cps.size(); ++k) cps[k] = k == 0 ? to_upper(cps[k]) : to_lower(cps[k]);
  } else if (how == "title") {
    bool prev_cased = false;
    for (auto& c : cps) {
      bool cased = is_upper(c) || is_lower(c);
      if (cased) c = prev_cased ? to_lower(c) : to_upper(c);
      prev_cased = cased;
    }
  }
  return encode_utf8(cps);
}

Result<std::string> jinja_title(const std::string& s) {
  auto cps = decode_utf8(s);
  GB_RETURN_IF_ERROR(check_caseable(cps, "title"));
  bool word_start = true;
  for (auto& c : cps) {
    bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_isspace(c);
    if (sep) {
      word_start = true;
      continue;
    }
    c = word_start ? to_upper(c) : to_lower(c);
    word_start = false;
  }
  return encode_utf8(cps);
}

std::int64_t py_count(const std::string& s, const std::string& sub) {
  if (sub.empty()) return static_cast<std::int64_t>(decode_utf8(s).size()) + 1;
  std::int64_t n = 0;
  for (std::size_t k = s.find(sub); k != std::string::npos; k = s.find(sub, k + sub.size())) ++n;
  return n;
}

std::int64_t py_find(const std::string& s, const std::string& sub, bool from_right) {
  std::size_t k = from_right ? s.rfind(sub) : s.find(sub);
  if (k == std::string::npos) return -1;
  return static_cast<std::int64_t>(decode_utf8(s.substr(0, k)).size());
}

}  // namespace glassbox::chat_template
