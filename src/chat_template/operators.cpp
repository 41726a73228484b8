// Python's binary operators on template values, and json.dumps (Hugging Face's tojson).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat_template/interpreter.h"

namespace glassbox::chat_template {

namespace {

bool as_int(const Value& v, std::int64_t* out) {
  if (v.kind == Value::Kind::kInt) { *out = v.i; return true; }
  if (v.kind == Value::Kind::kBool) { *out = v.b; return true; }
  return false;
}

bool as_double(const Value& v, double* out) {
  std::int64_t i;
  if (as_int(v, &i)) { *out = static_cast<double>(i); return true; }
  if (v.kind == Value::Kind::kFloat) { *out = v.f; return true; }
  return false;
}

Error overflow() { return make_error(ErrorCode::kUnsupported, "integer result beyond 64 bits (Python has big integers)"); }
Error zero_division(const char* what) { return make_error(ErrorCode::kInvalidArgument, std::string("ZeroDivisionError: ") + what); }

Result<Value> repeat(const Value& seq, std::int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    if (n > 0 && seq.s.size() > (64u << 20) / static_cast<std::size_t>(n))
      return make_error(ErrorCode::kLimitExceeded, "string repetition beyond 64 MiB");
    std::string out;
    for (std::int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::string(std::move(out));
  }
  if (n > 0 && seq.seq->size() > (1u << 24) / static_cast<std::size_t>(n))
    return make_error(ErrorCode::kLimitExceeded, "list repetition beyond 16M items");
  std::vector<Value> out;
  for (std::int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.seq->begin(), seq.seq->end());
  return Value::sequence(std::move(out), seq.seq_kind);
}

Result<Value> arithmetic(const std::string& op, const Value& a, const Value& b) {
  std::int64_t x, y;
  if (as_int(a, &x) && as_int(b, &y)) {
    std::int64_t r = 0;
    if (op == "+") { if (__builtin_add_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
    if (op == "-") { if (__builtin_sub_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
    if (op == "*") { if (__builtin_mul_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
    if (op == "/") {
      if (y == 0) return zero_division("division by zero");
      return Value::real(static_cast<double>(x) / static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) return zero_division("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) return overflow();
      std::int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) { --q; m += y; }
      return Value::integer(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y < 0) return Value::real(std::pow(static_cast<double>(x), static_cast<double>(y)));
      std::int64_t acc = 1;
      for (std::int64_t k = 0; k < y; ++k)
        if (__builtin_mul_overflow(acc, x, &acc)) return overflow();
      return Value::integer(acc);
    }
  }
  double p, q;
  if (as_double(a, &p) && as_double(b, &q)) {
    if (op == "+") return Value::real(p + q);
    if (op == "-") return Value::real(p - q);
    if (op == "*") return Value::real(p * q);
    if (op == "/") { if (q == 0) return zero_division("float division by zero"); return Value::real(p / q); }
    if (op == "//" || op == "%") {
      if (q == 0) return zero_division("float modulo");
      // CPython's float divmod.
      double m = std::fmod(p, q);
      double div = (p - m) / q;
      if (m != 0 && ((q < 0) != (m < 0))) {
        m += q;
        div -= 1.0;
      }
      if (op == "%") return Value::real(m);
      double fl = std::floor(div);
      if (div - fl > 0.5) fl += 1.0;
      return Value::real(div == 0 ? std::copysign(0.0, p / q) : fl);
    }
    if (op == "**") return Value::real(std::pow(p, q));
  }
  return make_error(ErrorCode::kInternal, "not arithmetic");
}

}  // namespace

Result<Value> binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    GB_ASSIGN_OR_RETURN(auto x, to_str(a));
    GB_ASSIGN_OR_RETURN(auto y, to_str(b));
    return Value::string(x + y);
  }
  if (op == "==") return Value::boolean(equals(a, b));
  if (op == "!=") return Value::boolean(!equals(a, b));
  if (op == "in" || op == "notin") {
    bool found = false;
    if (b.is_string()) {
      if (!a.is_string()) return type_error("'in <string>' requires string as left operand, not " + type_name(a));
      found = b.s.find(a.s) != std::string::npos;
    } else if (b.kind == Value::Kind::kDict) {
      found = b.dict->find(a) != nullptr;
    } else if (b.is_seq() || b.is_undefined()) {
      GB_ASSIGN_OR_RETURN(auto items, iterate(b));
      for (const auto& x : items) found = found || equals(x, a);
    } else {
      return type_error("argument of type '" + type_name(b) + "' is not iterable");
    }
    return Value::boolean(op == "in" ? found : !found);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    GB_ASSIGN_OR_RETURN(int c, compare(a, b));
    bool r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    return Value::boolean(r);
  }
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::string(a.s + b.s);
    if (a.is_seq() && b.is_seq() && a.seq_kind == b.seq_kind &&
        (a.seq_kind == SeqKind::kList || a.seq_kind == SeqKind::kTuple)) {
      std::vector<Value> out = *a.seq;
      out.insert(out.end(), b.seq->begin(), b.seq->end());
      return Value::sequence(std::move(out), a.seq_kind);
    }
    if (a.is_string())
      return type_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
  }
  if (op == "*") {
    std::int64_t n;
    auto seq_ok = [](const Value& v) {
      return v.is_string() || (v.is_seq() && (v.seq_kind == SeqKind::kList || v.seq_kind == SeqKind::kTuple));
    };
    if (seq_ok(a) && as_int(b, &n)) return repeat(a, n);
    if (seq_ok(b) && as_int(a, &n)) return repeat(b, n);
  }
  if (op == "%" && a.is_string())
    return make_error(ErrorCode::kUnsupported, "printf-style string formatting ('...' % value)");
  return type_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : decode_utf8(s)) {
    char buf[16];
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c > 0x7e)) {
          if (c >= 0x10000) {
            char32_t v = c - 0x10000;
            std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", static_cast<unsigned>(0xd800 + (v >> 10)),
                          static_cast<unsigned>(0xdc00 + (v & 0x3ff)));
          } else {
            std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          }
          out += buf;
        } else {
          append_utf8(out, c);
        }
    }
  }
  out += '"';
}

std::string json_float(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return float_repr(x);
}

Status dump(std::string& out, const Value& v, const JsonDumpOptions& o, int level) {
  auto newline = [&](int lvl) {
    if (!o.indent) return;
    out += '\n';
    for (int k = 0; k < lvl; ++k) out += *o.indent;
  };
  switch (v.kind) {
    case Value::Kind::kNone: out += "null"; return Status();
    case Value::Kind::kBool: out += v.b ? "true" : "false"; return Status();
    case Value::Kind::kInt: out += std::to_string(v.i); return Status();
    case Value::Kind::kFloat: out += json_float(v.f); return Status();
    case Value::Kind::kString: json_string(out, v.s, o.ensure_ascii); return Status();
    case Value::Kind::kSeq: {
      if (v.seq_kind == SeqKind::kIterator || v.seq_kind == SeqKind::kView)
        return type_error("Object of type " + type_name(v) + " is not JSON serializable");
      if (v.seq->empty()) { out += "[]"; return Status(); }
      out += '[';
      for (std::size_t k = 0; k < v.seq->size(); ++k) {
        if (k) out += o.item_separator;
        newline(level + 1);
        GB_RETURN_IF_ERROR(dump(out, (*v.seq)[k], o, level + 1));
      }
      newline(level);
      out += ']';
      return Status();
    }
    case Value::Kind::kDict: {
      if (v.dict->items.empty()) { out += "{}"; return Status(); }
      std::vector<std::pair<std::string, const Value*>> items;
      for (const auto& [k, val] : v.dict->items) {
        std::string key;
        switch (k.kind) {
          case Value::Kind::kString: key = k.s; break;
          case Value::Kind::kInt: key = std::to_string(k.i); break;
          case Value::Kind::kFloat: key = json_float(k.f); break;
          case Value::Kind::kBool: key = k.b ? "true" : "false"; break;
          case Value::Kind::kNone: key = "null"; break;
          default: return type_error("keys must be str, int, float, bool or None, not " + type_name(k));
        }
        items.emplace_back(std::move(key), &val);
      }
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      out += '{';
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (k) out += o.item_separator;
        newline(level + 1);
        json_string(out, items[k].first, o.ensure_ascii);
        out += o.key_separator;
        GB_RETURN_IF_ERROR(dump(out, *items[k].second, o, level + 1));
      }
      newline(level);
      out += '}';
      return Status();
    }
    default: return type_error("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

Result<std::string> json_dumps(const Value& v, const JsonDumpOptions& o) {
  std::string out;
  GB_RETURN_IF_ERROR(dump(out, v, o, 0));
  return out;
}

}  // namespace glassbox::chat_template
