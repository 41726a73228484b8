// Python object semantics for chat-template values (see value.h).
#include "chat_template/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/utf8.h"

namespace glassbox::chat_template {

namespace {

Error type_error(std::string what) {
  return make_error(ErrorCode::kInvalidArgument, "TypeError: " + std::move(what));
}

}  // namespace

Value Value::sequence(std::vector<Value> items, SeqKind k) {
  Value v;
  v.kind = Kind::kSeq;
  v.seq_kind = k;
  v.seq = std::make_shared<std::vector<Value>>(std::move(items));
  return v;
}

Value Value::dictionary(Dict d) {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::make_shared<Dict>(std::move(d));
  return v;
}

Value Value::namespace_of(Dict d) {
  Value v = dictionary(std::move(d));
  v.kind = Kind::kNamespace;
  return v;
}

Value Value::callable(std::string name, std::function<Result<Value>(Interpreter&, CallArgs&)> fn) {
  Value v;
  v.kind = Kind::kCallable;
  v.fn = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

const Value* Dict::find(const Value& key) const {
  for (const auto& kv : items)
    if (equals(kv.first, key)) return &kv.second;
  return nullptr;
}

const Value* Dict::find(const std::string& key) const {
  for (const auto& kv : items)
    if (kv.first.kind == Value::Kind::kString && kv.first.s == key) return &kv.second;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& kv : items)
    if (equals(kv.first, key)) {
      kv.second = std::move(value);
      return;
    }
  items.emplace_back(std::move(key), std::move(value));
}

Result<std::vector<std::optional<Value>>> bind_args(const CallArgs& args, const std::vector<const char*>& names,
                                                    const std::string& what) {
  std::vector<std::optional<Value>> out(names.size());
  if (args.pos.size() > names.size())
    return type_error(what + " takes at most " + std::to_string(names.size()) + " arguments (" +
                      std::to_string(args.pos.size()) + " given)");
  for (std::size_t i = 0; i < args.pos.size(); ++i) out[i] = args.pos[i];
  for (const auto& [k, v] : args.kw) {
    auto it = std::find_if(names.begin(), names.end(), [&](const char* n) { return k == n; });
    if (it == names.end()) return type_error(what + " got an unexpected keyword argument '" + k + "'");
    auto idx = static_cast<std::size_t>(it - names.begin());
    if (out[idx]) return type_error(what + " got multiple values for argument '" + k + "'");
    out[idx] = v;
  }
  return out;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return v.b;
    case Value::Kind::kInt: return v.i != 0;
    case Value::Kind::kFloat: return v.f != 0.0;
    case Value::Kind::kString: return !v.s.empty();
    case Value::Kind::kSeq: return v.seq_kind == SeqKind::kIterator || !v.seq->empty();
    case Value::Kind::kDict: return !v.dict->items.empty();
    case Value::Kind::kNamespace:
    case Value::Kind::kCallable: return true;
  }
  return false;
}

namespace {

bool numeric(const Value& v, double* d, bool* is_int, std::int64_t* i) {
  switch (v.kind) {
    case Value::Kind::kBool: *i = v.b; *d = v.b; *is_int = true; return true;
    case Value::Kind::kInt: *i = v.i; *d = static_cast<double>(v.i); *is_int = true; return true;
    case Value::Kind::kFloat: *d = v.f; *is_int = false; return true;
    default: return false;
  }
}

}  // namespace

bool equals(const Value& a, const Value& b) {
  double da, db;
  bool ia, ib;
  std::int64_t xa, xb;
  if (numeric(a, &da, &ia, &xa) && numeric(b, &db, &ib, &xb)) return (ia && ib) ? xa == xb : da == db;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.s == b.s;
    case Value::Kind::kSeq: {
      if (a.seq == b.seq) return true;
      bool tuple_a = a.seq_kind == SeqKind::kTuple, tuple_b = b.seq_kind == SeqKind::kTuple;
      if (tuple_a != tuple_b || a.seq_kind == SeqKind::kIterator || b.seq_kind == SeqKind::kIterator) return false;
      if (a.seq->size() != b.seq->size()) return false;
      for (std::size_t k = 0; k < a.seq->size(); ++k)
        if (!equals((*a.seq)[k], (*b.seq)[k])) return false;
      return true;
    }
    case Value::Kind::kDict: {
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& kv : a.dict->items) {
        const Value* other = b.dict->find(kv.first);
        if (!other || !equals(kv.second, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kNamespace: return a.dict == b.dict;
    case Value::Kind::kCallable: return a.fn == b.fn;
    default: return false;
  }
}

Result<int> compare(const Value& a, const Value& b) {
  double da = 0, db = 0;
  bool ia = false, ib = false;
  std::int64_t xa = 0, xb = 0;
  if (numeric(a, &da, &ia, &xa) && numeric(b, &db, &ib, &xb)) {
    if (ia && ib) return xa < xb ? -1 : (xa > xb ? 1 : 0);
    return da < db ? -1 : (da > db ? 1 : 0);
  }
  if (a.kind == Value::Kind::kString && b.kind == Value::Kind::kString) {
    int c = a.s.compare(b.s);  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.kind == Value::Kind::kSeq && b.kind == Value::Kind::kSeq && a.seq_kind == b.seq_kind &&
      a.seq_kind != SeqKind::kIterator && a.seq_kind != SeqKind::kView) {
    std::size_t n = std::min(a.seq->size(), b.seq->size());
    for (std::size_t k = 0; k < n; ++k) {
      if (equals((*a.seq)[k], (*b.seq)[k])) continue;
      return compare((*a.seq)[k], (*b.seq)[k]);
    }
    return a.seq->size() < b.seq->size() ? -1 : (a.seq->size() > b.seq->size() ? 1 : 0);
  }
  if (a.is_undefined() || b.is_undefined())
    return make_error(ErrorCode::kInvalidArgument,
                      "UndefinedError: " + (a.is_undefined() ? a.s : b.s) + " (compared with '<')");
  return type_error("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "str";
    case Value::Kind::kSeq:
      switch (v.seq_kind) {
        case SeqKind::kList: return "list";
        case SeqKind::kTuple: return "tuple";
        case SeqKind::kIterator: return "generator";
        case SeqKind::kView: return "dict view";
        case SeqKind::kRange: return "range";
      }
      return "list";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kNamespace: return "Namespace";
    case Value::Kind::kCallable: return "function";
  }
  return "object";
}

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits and decimal exponent, then Python's repr layout.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  std::size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    auto int_len = static_cast<std::size_t>(exp + 1);
    if (digits.size() <= int_len) {
      out = digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  }
  return neg ? "-" + out : out;
}

namespace {

bool py_isprintable(char32_t c) {
  if (c < 0x20 || c == 0x7f) return false;
  if (c >= 0x80 && c <= 0xa0) return false;
  if (c == 0xad || c == 0x2028 || c == 0x2029 || (c >= 0x2000 && c <= 0x200f) || c == 0x202f || c == 0x205f ||
      c == 0x3000 || c == 0xfeff || c == 0x1680 || (c >= 0xd800 && c <= 0xdfff))
    return false;
  return true;
}

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : decode_utf8(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!py_isprintable(c)) {
      char buf[16];
      if (c < 0x100) std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000) std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      else std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(c));
      out += buf;
    } else {
      append_utf8(out, c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

Result<std::string> to_str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return std::string();
    case Value::Kind::kString: return v.s;
    case Value::Kind::kNone: return std::string("None");
    case Value::Kind::kBool: return std::string(v.b ? "True" : "False");
    case Value::Kind::kInt: return std::to_string(v.i);
    case Value::Kind::kFloat: return float_repr(v.f);
    default: return to_repr(v);
  }
}

Result<std::string> to_repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return std::string("Undefined");
    case Value::Kind::kString: return repr_string(v.s);
    case Value::Kind::kSeq: {
      if (v.seq_kind == SeqKind::kIterator || v.seq_kind == SeqKind::kView || v.seq_kind == SeqKind::kRange)
        return make_error(ErrorCode::kUnsupported,
                          "printing a " + type_name(v) + " (Python prints its memory address); apply |list first");
      bool tuple = v.seq_kind == SeqKind::kTuple;
      std::string out = tuple ? "(" : "[";
      for (std::size_t k = 0; k < v.seq->size(); ++k) {
        if (k) out += ", ";
        GB_ASSIGN_OR_RETURN(auto item, to_repr((*v.seq)[k]));
        out += item;
      }
      if (tuple && v.seq->size() == 1) out += ",";
      out += tuple ? ")" : "]";
      return out;
    }
    case Value::Kind::kDict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, val] : v.dict->items) {
        if (!first) out += ", ";
        first = false;
        GB_ASSIGN_OR_RETURN(auto ks, to_repr(k));
        GB_ASSIGN_OR_RETURN(auto vs, to_repr(val));
        out += ks + ": " + vs;
      }
      return out + "}";
    }
    case Value::Kind::kNamespace:
    case Value::Kind::kCallable:
      return make_error(ErrorCode::kUnsupported,
                        "printing a " + type_name(v) + " (Python prints its memory address)");
    default: return to_str(v);
  }
}

Result<std::vector<Value>> iterate(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return std::vector<Value>{};
    case Value::Kind::kString: {
      std::vector<Value> out;
      for (char32_t c : decode_utf8(v.s)) {
        std::string ch;
        append_utf8(ch, c);
        out.push_back(Value::string(std::move(ch)));
      }
      return out;
    }
    case Value::Kind::kSeq: return *v.seq;
    case Value::Kind::kDict: {
      std::vector<Value> out;
      for (const auto& kv : v.dict->items) out.push_back(kv.first);
      return out;
    }
    default: return type_error("'" + type_name(v) + "' object is not iterable");
  }
}

Result<std::int64_t> length(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kUndefined: return std::int64_t{0};
    case Value::Kind::kString: return static_cast<std::int64_t>(decode_utf8(v.s).size());
    case Value::Kind::kSeq:
      if (v.seq_kind == SeqKind::kIterator) return type_error("object of type 'generator' has no len()");
      return static_cast<std::int64_t>(v.seq->size());
    case Value::Kind::kDict: return static_cast<std::int64_t>(v.dict->items.size());
    default: return type_error("object of type '" + type_name(v) + "' has no len()");
  }
}

std::vector<char32_t> decode_utf8(const std::string& s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t k = 0; k < s.size();) {
    auto c = static_cast<unsigned char>(s[k]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (k + static_cast<std::size_t>(n) > s.size()) n = 1;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (int j = 1; j < n; ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[k + static_cast<std::size_t>(j)]) & 0x3f);
    out.push_back(cp);
    k += static_cast<std::size_t>(n);
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) { utf8_append(out, cp); }

std::string encode_utf8(const std::vector<char32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

bool valid_utf8(const std::string& s) {
  for (std::size_t k = 0; k < s.size();) {
    auto c = static_cast<unsigned char>(s[k]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || k + n > s.size()) return false;
    if (n >= 2 && c < 0xc2) return false;  // overlong 2-byte form
    for (std::size_t j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(s[k + j]) & 0xc0) != 0x80) return false;
    if (n == 3) {
      auto c1 = static_cast<unsigned char>(s[k + 1]);
      if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0)) return false;  // overlong / surrogate
    }
    if (n == 4) {
      auto c1 = static_cast<unsigned char>(s[k + 1]);
      if ((c == 0xf0 && c1 < 0x90) || c > 0xf4 || (c == 0xf4 && c1 >= 0x90)) return false;
    }
    k += n;
  }
  return true;
}

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

}  // namespace glassbox::chat_template
