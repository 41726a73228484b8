#include "core/jsonl.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/utf8.h"

namespace glassbox::jsonl {
namespace {

// Bytes that a JSON string can copy as they are: printable ASCII other than '"' and '\\'.
constexpr bool plain_ascii(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629 table: no overlongs, no surrogates,
// nothing above U+10FFFF). 0: the lead byte cannot start one; -k: the first k bytes are a well-formed prefix
// cut short by an unexpected byte or by the end of s.
int utf8_sequence(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -k;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < lo || b > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return n;
}

void append_escaped_control(std::string& out, unsigned char c) {
  switch (c) {
    case '\b': out += "\\b"; return;
    case '\t': out += "\\t"; return;
    case '\n': out += "\\n"; return;
    case '\f': out += "\\f"; return;
    case '\r': out += "\\r"; return;
    default: {
      static const char kHex[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(esc, 6);
    }
  }
}

}  // namespace

void append_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t run = i;
    while (run < s.size() && plain_ascii(static_cast<unsigned char>(s[run]))) ++run;
    out.append(s.data() + i, run - i);
    i = run;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      append_escaped_control(out, c);
      ++i;
    } else {
      const int n = utf8_sequence(s, i);
      if (n > 0) {
        out.append(s.data() + i, static_cast<std::size_t>(n));
        i += static_cast<std::size_t>(n);
      } else {
        out += "\xEF\xBF\xBD";
        i += n == 0 ? 1 : static_cast<std::size_t>(-n);  // the byte that cut the sequence short starts afresh
      }
    }
  }
  out += '"';
}

void append_uint(std::string& out, std::uint64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  out.append(tmp, r.ptr);
}

void append_uint_array(std::string& out, const std::vector<std::uint32_t>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_uint(out, v[i]);
  }
  out += ']';
}

void append_string_array(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_string(out, v[i]);
  }
  out += ']';
}

void append_pair_array(std::string& out, const std::vector<std::pair<std::size_t, std::size_t>>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    out += i ? ",[" : "[";
    append_uint(out, v[i].first);
    out += ',';
    append_uint(out, v[i].second);
    out += ']';
  }
  out += ']';
}

namespace {

// A cursor over one line; every parse step returns false to hand the line to the general parser.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  void skip_ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool hex4(std::uint32_t& v) {
    if (s.size() - i < 4) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return false;
    }
    return true;
  }
  // After the backslash of a \u escape: one scalar value (a surrogate pair counts as one).
  bool unicode_escape(std::string& out) {
    std::uint32_t cp;
    if (!hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      std::uint32_t lo;
      if (!eat('\\') || !eat('u') || !hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    utf8_append(out, static_cast<char32_t>(cp));
    return true;
  }
  bool escape(std::string& out) {
    if (i >= s.size()) return false;
    switch (s[i++]) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': return unicode_escape(out);
      default: return false;
    }
  }
  // At the opening quote: a string with escapes decoded and UTF-8 checked.
  bool string(std::string& out) {
    if (!eat('"')) return false;
    out.clear();
    for (;;) {
      std::size_t run = i;
      while (run < s.size() && plain_ascii(static_cast<unsigned char>(s[run]))) ++run;
      out.append(s.data() + i, run - i);
      i = run;
      if (i >= s.size()) return false;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '"') {
        ++i;
        return true;
      }
      if (c == '\\') {
        ++i;
        if (!escape(out)) return false;
      } else if (c < 0x20) {
        return false;  // raw control characters are invalid JSON
      } else {
        const int n = utf8_sequence(s, i);
        if (n <= 0) return false;
        out.append(s.data() + i, static_cast<std::size_t>(n));
        i += static_cast<std::size_t>(n);
      }
    }
  }
  // At the opening quote of a key: the key if it has no escapes (escaped keys go to the general parser).
  bool plain_key(std::string_view& key) {
    if (!eat('"')) return false;
    const std::size_t start = i;
    while (i < s.size() && plain_ascii(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size() || s[i] != '"') return false;
    key = s.substr(start, i - start);
    ++i;
    return true;
  }
};

bool parse_members(Cursor& c, TextLine& out) {
  bool have_text = false, have_pair = false;
  c.skip_ws();
  if (!c.eat('{')) return false;
  for (;;) {
    c.skip_ws();
    std::string_view key;
    if (!c.plain_key(key)) return false;
    c.skip_ws();
    if (!c.eat(':')) return false;
    c.skip_ws();
    if (key == "text" && !have_text) {
      if (!c.string(out.text)) return false;
      have_text = true;
    } else if (key == "pair" && !have_pair) {
      have_pair = true;
      if (c.s.substr(c.i, 4) == "null") {
        c.i += 4;
      } else {
        out.pair.emplace();
        if (!c.string(*out.pair)) return false;
      }
    } else {
      return false;  // other keys, duplicates: the general parser decides
    }
    c.skip_ws();
    if (c.eat('}')) break;
    if (!c.eat(',')) return false;
  }
  c.skip_ws();
  return have_text && c.i == c.s.size();
}

}  // namespace

LineKind parse_text_line(std::string_view line, TextLine& out) {
  if (line.empty()) return LineKind::kBlank;
  out.pair.reset();
  Cursor c{line};
  return parse_members(c, out) ? LineKind::kParsed : LineKind::kGeneral;
}

bool LineReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {  // drop the lines already handed out
    data_.erase(0, pos_);
    pos_ = 0;
  }
  const std::size_t old = data_.size();
  data_.resize(old + chunk_);
  for (;;) {
    const ssize_t n = ::read(fd_, data_.data() + old, chunk_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) status_ = make_error(ErrorCode::kIo, std::string("read failed: ") + std::strerror(errno), "stdin");
    data_.resize(old + static_cast<std::size_t>(n > 0 ? n : 0));
    if (n <= 0) eof_ = true;
    return n > 0;
  }
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = pos_;
  for (;;) {
    const void* nl = std::memchr(data_.data() + scanned, '\n', data_.size() - scanned);
    if (nl) {
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - data_.data());
      line = std::string_view(data_).substr(pos_, end - pos_);
      pos_ = end + 1;
      return true;
    }
    scanned = data_.size() - pos_;  // offset of the unscanned part once fill() has moved the line to the front
    if (!fill()) break;
  }
  if (pos_ >= data_.size() || !status_.ok()) return false;
  line = std::string_view(data_).substr(pos_);
  pos_ = data_.size();
  return true;
}

Status OutBuffer::flush() {
  std::size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::kIo, std::string("write failed: ") + std::strerror(errno), "stdout");
    }
    done += static_cast<std::size_t>(n);
  }
  buf_.clear();
  return {};
}

}  // namespace glassbox::jsonl
