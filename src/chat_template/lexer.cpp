// Jinja2's lexer, for the subset Hugging Face chat templates use (see lexer.h).
#include "chat_template/lexer.h"

#include <cctype>
#include <cstring>

#include "chat_template/value.h"

namespace glassbox::chat_template {

std::string pos_string(const Pos& p) { return "line " + std::to_string(p.line) + ":" + std::to_string(p.column); }

namespace {

// "\r\n" and "\r" become "\n"; one trailing newline is dropped (keep_trailing_newline=False).
std::string normalize_source(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (in[k] == '\r') {
      out += '\n';
      if (k + 1 < in.size() && in[k + 1] == '\n') ++k;
    } else {
      out += in[k];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  Lexer(std::string src, const LexOptions& o) : src_(std::move(src)), opt_(o) {
    line_starts_.push_back(0);
    for (std::size_t k = 0; k < src_.size(); ++k)
      if (src_[k] == '\n') line_starts_.push_back(k + 1);
  }

  Result<std::vector<Token>> run() {
    std::size_t pos = 0;
    bool line_starting = true;
    while (pos < src_.size()) {
      std::size_t start = find_tag(pos);
      if (start == std::string::npos) {
        emit_data(src_.substr(pos), pos);
        break;
      }
      char kind = src_[start + 1];  // '{', '%', '#'
      char sign = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (sign != '-' && sign != '+') sign = '\0';
      std::string text = src_.substr(pos, start - pos);
      std::size_t raw_body = 0;
      bool raw = kind == '%' && is_raw_begin(start, &raw_body);
      if (sign == '-') {
        text = rstrip(text);
      } else if (sign != '+' && opt_.lstrip_blocks && kind != '{') {
        std::size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) && l_pos < text.size() && all_space(text.substr(l_pos)))
          text.resize(l_pos);
      }
      emit_data(text, pos);
      std::size_t after = 0;
      if (raw) {
        GB_RETURN_IF_ERROR(lex_raw(start, raw_body, &after));
      } else if (kind == '#') {
        GB_RETURN_IF_ERROR(lex_comment(start, &after));
      } else {
        GB_RETURN_IF_ERROR(lex_tag(start, kind, sign, &after));
      }
      line_starting = after > 0 && src_[after - 1] == '\n';
      pos = after;
    }
    tokens_.push_back(Token{Tok::kEof, "", pos_at(src_.size())});
    return std::move(tokens_);
  }

 private:
  Pos pos_at(std::size_t off) const {
    std::size_t lo = 0, hi = line_starts_.size();
    while (hi - lo > 1) {
      std::size_t mid = (lo + hi) / 2;
      if (line_starts_[mid] <= off) lo = mid; else hi = mid;
    }
    int col = 1;
    for (std::size_t k = line_starts_[lo]; k < off && k < src_.size(); ++k)
      if ((static_cast<unsigned char>(src_[k]) & 0xc0) != 0x80) ++col;
    return Pos{static_cast<int>(lo) + 1, col};
  }

  Error error_at(std::size_t off, std::string what) const {
    return make_error(ErrorCode::kInvalidArgument, "TemplateSyntaxError: " + std::move(what), pos_string(pos_at(off)),
                      "fix the template (Jinja2 rejects it too)");
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t k = from; k + 1 < src_.size(); ++k)
      if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
    return std::string::npos;
  }

  static bool all_space(const std::string& s) {
    for (char32_t c : decode_utf8(s))
      if (!py_isspace(c)) return false;
    return !s.empty();
  }

  static std::string rstrip(const std::string& s) {
    auto cps = decode_utf8(s);
    while (!cps.empty() && py_isspace(cps.back())) cps.pop_back();
    return encode_utf8(cps);
  }

  // Skips Python whitespace from `k`, returns the new offset.
  std::size_t skip_space(std::size_t k) const {
    while (k < src_.size()) {
      auto c = static_cast<unsigned char>(src_[k]);
      if (c < 0x80) {
        if (!py_isspace(c)) break;
        ++k;
        continue;
      }
      std::size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
      auto cps = decode_utf8(src_.substr(k, n));
      if (cps.empty() || !py_isspace(cps[0])) break;
      k += n;
    }
    return k;
  }

  void emit_data(const std::string& text, std::size_t off) {
    if (!text.empty()) tokens_.push_back(Token{Tok::kData, text, pos_at(off)});
  }

  bool is_raw_begin(std::size_t start, std::size_t* body) const {
    std::size_t k = start + 2;
    if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) ++k;
    k = skip_space(k);
    if (src_.compare(k, 3, "raw") != 0) return false;
    k = skip_space(k + 3);
    if (src_.compare(k, 3, "-%}") == 0) {
      *body = skip_space(k + 3);
      return true;
    }
    if (src_.compare(k, 2, "%}") == 0) {
      *body = k + 2;
      return true;
    }
    return false;
  }

  Status lex_raw(std::size_t start, std::size_t body, std::size_t* after) {
    for (std::size_t k = body; k + 1 < src_.size(); ++k) {
      if (src_[k] != '{' || src_[k + 1] != '%') continue;
      std::size_t j = k + 2;
      char sign = '\0';
      if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) sign = src_[j++];
      j = skip_space(j);
      if (src_.compare(j, 6, "endraw") != 0) continue;
      j = skip_space(j + 6);
      std::string text = src_.substr(body, k - body);
      if (sign == '-') text = rstrip(text);
      if (src_.compare(j, 3, "+%}") == 0) {
        *after = j + 3;
      } else if (src_.compare(j, 3, "-%}") == 0) {
        *after = skip_space(j + 3);
      } else if (src_.compare(j, 2, "%}") == 0) {
        *after = j + 2;
        if (opt_.trim_blocks && *after < src_.size() && src_[*after] == '\n') ++*after;
      } else {
        continue;
      }
      emit_data(text, body);
      return Status();
    }
    return error_at(start, "missing end of raw directive");
  }

  Status lex_comment(std::size_t start, std::size_t* after) {
    std::size_t k = src_.find("#}", start + 2);
    if (k == std::string::npos) return error_at(start, "missing end of comment tag");
    char sign = k > start + 2 ? src_[k - 1] : '\0';
    *after = k + 2;
    if (sign == '-') {
      *after = skip_space(*after);
    } else if (sign != '+' && opt_.trim_blocks && *after < src_.size() && src_[*after] == '\n') {
      ++*after;
    }
    return Status();
  }

  Status lex_tag(std::size_t start, char kind, char sign, std::size_t* after) {
    bool var = kind == '{';
    tokens_.push_back(Token{var ? Tok::kVarBegin : Tok::kBlockBegin, "", pos_at(start)});
    std::size_t k = start + 2 + (sign ? 1 : 0);
    int depth = 0;
    while (true) {
      k = skip_space(k);
      if (k >= src_.size()) return error_at(start, std::string("unexpected end of template, expected '") +
                                                       (var ? "}}" : "%}") + "'");
      if (depth == 0) {
        const char* end = var ? "}}" : "%}";
        char end_sign = '\0';
        std::size_t end_at = std::string::npos;
        if ((src_[k] == '-' || (!var && src_[k] == '+')) && src_.compare(k + 1, 2, end) == 0) {
          end_sign = src_[k];
          end_at = k + 3;
        } else if (src_.compare(k, 2, end) == 0) {
          end_at = k + 2;
        }
        if (end_at != std::string::npos) {
          tokens_.push_back(Token{var ? Tok::kVarEnd : Tok::kBlockEnd, "", pos_at(k)});
          if (end_sign == '-') {
            end_at = skip_space(end_at);
          } else if (!var && end_sign != '+' && opt_.trim_blocks && end_at < src_.size() && src_[end_at] == '\n') {
            ++end_at;
          }
          *after = end_at;
          return Status();
        }
      }
      GB_RETURN_IF_ERROR(lex_expression_token(&k, &depth));
    }
  }

  Status lex_expression_token(std::size_t* kp, int* depth) {
    std::size_t k = *kp;
    char c = src_[k];
    Pos p = pos_at(k);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = k;
      while (j < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
      tokens_.push_back(Token{Tok::kName, src_.substr(k, j - k), p});
      *kp = j;
      return Status();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(kp);
    if (c == '\'' || c == '"') return lex_string(kp);
    static const char* const kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                       "]",  "(",  ")",  "{",  "}",  "=",  ".", ":", "|", ",", ";", ">", "<"};
    for (const char* op : kOps) {
      std::size_t n = std::strlen(op);
      if (src_.compare(k, n, op) != 0) continue;
      if (op[0] == '(' || op[0] == '[' || op[0] == '{') ++*depth;
      if ((op[0] == ')' || op[0] == ']' || op[0] == '}') && *depth > 0) --*depth;
      tokens_.push_back(Token{Tok::kOperator, op, p});
      *kp = k + n;
      return Status();
    }
    return error_at(k, std::string("unexpected char '") + c + "'");
  }

  Status lex_number(std::size_t* kp) {
    std::size_t k = *kp, j = k;
    auto digits = [&](std::size_t from) {
      std::size_t q = from;
      while (q < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[q])) ||
                                 (src_[q] == '_' && q > from && q + 1 < src_.size() &&
                                  std::isdigit(static_cast<unsigned char>(src_[q + 1])))))
        ++q;
      return q;
    };
    j = digits(k);
    bool is_float = false;
    bool after_dot = k > 0 && src_[k - 1] == '.';
    if (!after_dot && j + 1 < src_.size() && src_[j] == '.' && std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
      j = digits(j + 1);
      is_float = true;
    }
    if (!after_dot && j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
      std::size_t q = j + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (q < src_.size() && std::isdigit(static_cast<unsigned char>(src_[q]))) {
        j = digits(q);
        is_float = true;
      }
    }
    std::string text;
    for (std::size_t q = k; q < j; ++q)
      if (src_[q] != '_') text += src_[q];
    tokens_.push_back(Token{is_float ? Tok::kFloat : Tok::kInteger, text, pos_at(k)});
    *kp = j;
    return Status();
  }

  Status lex_string(std::size_t* kp) {
    std::size_t k = *kp;
    char q = src_[k];
    std::string out;
    std::size_t j = k + 1;
    for (; j < src_.size() && src_[j] != q; ++j) {
      if (src_[j] != '\\') {
        out += src_[j];
        continue;
      }
      if (++j >= src_.size()) break;
      char e = src_[j];
      auto hex = [&](int n) -> long {
        if (j + static_cast<std::size_t>(n) >= src_.size()) return -1;
        long v = 0;
        for (int t = 1; t <= n; ++t) {
          char h = src_[j + static_cast<std::size_t>(t)];
          if (!std::isxdigit(static_cast<unsigned char>(h))) return -1;
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        return v;
      };
      switch (e) {
        case '\n': break;  // line continuation
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x': case 'u': case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          long v = hex(n);
          if (v < 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
            return error_at(j - 1, std::string("invalid \\") + e + " escape in string literal");
          append_utf8(out, static_cast<char32_t>(v));
          j += static_cast<std::size_t>(n);
          break;
        }
        case 'N': return error_at(j - 1, "unsupported \\N{...} escape in string literal");
        default:
          if (e >= '0' && e <= '7') {
            int v = 0, n = 0;
            while (n < 3 && j < src_.size() && src_[j] >= '0' && src_[j] <= '7') v = v * 8 + (src_[j++] - '0'), ++n;
            --j;
            append_utf8(out, static_cast<char32_t>(v));
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    if (j >= src_.size()) return error_at(k, "unterminated string literal");
    tokens_.push_back(Token{Tok::kString, out, pos_at(k)});
    *kp = j + 1;
    return Status();
  }

  std::string src_;
  LexOptions opt_;
  std::vector<std::size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> tokenize(const std::string& source, const LexOptions& options) {
  if (!valid_utf8(source))
    return make_error(ErrorCode::kInvalidModel, "chat template is not valid UTF-8", "", "re-save the template as UTF-8");
  return Lexer(normalize_source(source), options).run();
}

}  // namespace glassbox::chat_template
