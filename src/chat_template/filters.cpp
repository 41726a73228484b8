// Jinja2 3.1's filters and tests that chat templates use; `tojson` is Hugging Face's override
// (json.dumps with ensure_ascii=False). Known Jinja2 filters outside this set are refused by name.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "chat_template/interpreter.h"
#include "chat_template/text.h"

namespace glassbox::chat_template {

namespace {

using Filter = std::function<Result<Value>(Interpreter&, const Value&, CallArgs&)>;
using Test = std::function<Result<bool>(Interpreter&, const Value&, CallArgs&)>;

Error unsupported(const std::string& what) {
  return make_error(ErrorCode::kUnsupported, "unsupported construct: " + what, "",
                    "glassbox renders the subset of Jinja2 that chat templates use (docs/generation.md)");
}

bool is_int(const Value& v) { return v.kind == Value::Kind::kInt || v.kind == Value::Kind::kBool; }
std::int64_t ival(const Value& v) { return v.kind == Value::Kind::kBool ? v.b : v.i; }

Result<std::string> soft_str(const Value& v) { return to_str(v); }

// Jinja's make_attrgetter: "a.b.0" looked up part by part through getitem.
Result<Value> get_path(Interpreter& in, const Value& item, const Value& attribute) {
  if (is_int(attribute)) return in.getitem(item, attribute);
  GB_ASSIGN_OR_RETURN(auto path, soft_str(attribute));
  Value cur = item;
  std::size_t pos = 0;
  while (true) {
    std::size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    Value key = Value::string(part);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      key = Value::integer(std::strtoll(part.c_str(), nullptr, 10));
    GB_ASSIGN_OR_RETURN(cur, in.getitem(cur, key));
    if (dot == std::string::npos) return cur;
    pos = dot + 1;
  }
}

Value generator(std::vector<Value> items) { return Value::sequence(std::move(items), SeqKind::kIterator); }

// select/reject/selectattr/rejectattr.
Result<Value> select_or_reject(Interpreter& in, const Value& seq, CallArgs& a, bool by_attr, bool keep) {
  if (!truthy(seq)) return generator({});  // Jinja2 iterates only a true value
  GB_ASSIGN_OR_RETURN(auto items, iterate(seq));
  std::size_t next = 0;
  Value attr;
  if (by_attr) {
    if (a.pos.empty()) return type_error("Missing parameter for attribute name");
    attr = a.pos[next++];
  }
  std::string test_name;
  if (next < a.pos.size()) {
    GB_ASSIGN_OR_RETURN(test_name, soft_str(a.pos[next]));
    ++next;
  }
  CallArgs test_args;
  test_args.pos.assign(a.pos.begin() + static_cast<std::ptrdiff_t>(next), a.pos.end());
  test_args.kw = a.kw;
  std::vector<Value> out;
  for (const auto& item : items) {
    Value subject = item;
    if (by_attr) { GB_ASSIGN_OR_RETURN(subject, get_path(in, item, attr)); }
    bool pass;
    if (test_name.empty()) {
      pass = truthy(subject);
    } else {
      CallArgs copy = test_args;
      GB_ASSIGN_OR_RETURN(pass, in.test(test_name, subject, copy));
    }
    if (pass == keep) out.push_back(item);
  }
  return generator(std::move(out));
}

Result<Value> map_filter(Interpreter& in, const Value& seq, CallArgs& a) {
  if (!truthy(seq)) return generator({});  // Jinja2 iterates only a true value
  GB_ASSIGN_OR_RETURN(auto items, iterate(seq));
  std::vector<Value> out;
  const Value* attribute = nullptr;
  const Value* dflt = nullptr;
  for (const auto& [k, v] : a.kw) {
    if (k == "attribute") attribute = &v;
    else if (k == "default") dflt = &v;
  }
  if (attribute) {
    for (const auto& item : items) {
      GB_ASSIGN_OR_RETURN(auto v, get_path(in, item, *attribute));
      out.push_back(v.is_undefined() && dflt ? *dflt : v);
    }
    return generator(std::move(out));
  }
  if (a.pos.empty()) return generator(std::move(items));
  GB_ASSIGN_OR_RETURN(auto name, soft_str(a.pos[0]));
  CallArgs rest;
  rest.pos.assign(a.pos.begin() + 1, a.pos.end());
  rest.kw = a.kw;
  for (const auto& item : items) {
    CallArgs copy = rest;
    GB_ASSIGN_OR_RETURN(auto v, in.filter(name, item, copy));
    out.push_back(std::move(v));
  }
  return generator(std::move(out));
}

Result<Value> tojson_filter(Interpreter&, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"ensure_ascii", "indent", "separators", "sort_keys"}, "tojson"));
  JsonDumpOptions o;
  if (args[0]) o.ensure_ascii = truthy(*args[0]);
  if (args[1] && !args[1]->is_none()) {
    if (is_int(*args[1])) o.indent = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, ival(*args[1]))), ' ');
    else if (args[1]->is_string()) o.indent = args[1]->s;
    else return type_error("tojson indent must be an int or str");
    o.item_separator = ",";
  }
  if (args[2] && !args[2]->is_none()) {
    GB_ASSIGN_OR_RETURN(auto seps, iterate(*args[2]));
    if (seps.size() != 2 || !seps[0].is_string() || !seps[1].is_string())
      return type_error("tojson separators must be a pair of strings");
    o.item_separator = seps[0].s;
    o.key_separator = seps[1].s;
  }
  if (args[3]) o.sort_keys = truthy(*args[3]);
  GB_ASSIGN_OR_RETURN(auto s, json_dumps(v, o));
  return Value::string(std::move(s));
}

// Python int(str): optional sign, digits with single underscores, surrounding whitespace.
bool parse_py_int(const std::string& text, std::int64_t* out) {
  std::string s = py_strip(text, nullptr, true, true);
  std::size_t k = 0;
  bool neg = false;
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) neg = s[k++] == '-';
  if (k >= s.size()) return false;
  std::string digits;
  for (; k < s.size(); ++k) {
    if (s[k] == '_' && !digits.empty() && k + 1 < s.size() && s[k + 1] != '_') continue;
    if (s[k] < '0' || s[k] > '9') return false;
    digits += s[k];
  }
  if (digits.empty() || digits.size() > 18) return false;
  *out = std::strtoll(digits.c_str(), nullptr, 10) * (neg ? -1 : 1);
  return true;
}

bool parse_py_float(const std::string& text, double* out) {
  std::string s = py_strip(text, nullptr, true, true);
  if (s.empty()) return false;
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string body = lower[0] == '+' || lower[0] == '-' ? lower.substr(1) : lower;
  if (body == "inf" || body == "infinity" || body == "nan") {
    *out = body == "nan" ? NAN : (lower[0] == '-' ? -INFINITY : INFINITY);
    return true;
  }
  for (char c : body)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

Result<Value> int_filter(Interpreter&, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"default", "base"}, "int"));
  Value dflt = args[0] ? *args[0] : Value::integer(0);
  if (args[1] && !(is_int(*args[1]) && ival(*args[1]) == 10)) return unsupported("|int with a base other than 10");
  if (v.is_undefined()) return undefined_error(v);
  if (is_int(v)) return Value::integer(ival(v));
  if (v.kind == Value::Kind::kFloat) {
    if (!std::isfinite(v.f)) return dflt;
    if (std::fabs(v.f) >= 9.2e18) return unsupported("integer beyond 64 bits");
    return Value::integer(static_cast<std::int64_t>(v.f));
  }
  if (v.is_string()) {
    std::int64_t i;
    if (parse_py_int(v.s, &i)) return Value::integer(i);
    double d;
    if (parse_py_float(v.s, &d) && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::integer(static_cast<std::int64_t>(d));
  }
  return dflt;
}

Result<Value> float_filter(Interpreter&, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"default"}, "float"));
  Value dflt = args[0] ? *args[0] : Value::real(0.0);
  if (v.is_undefined()) return undefined_error(v);
  if (is_int(v)) return Value::real(static_cast<double>(ival(v)));
  if (v.kind == Value::Kind::kFloat) return v;
  double d;
  if (v.is_string() && parse_py_float(v.s, &d)) return Value::real(d);
  return dflt;
}

Result<Value> join_filter(Interpreter& in, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"d", "attribute"}, "join"));
  GB_ASSIGN_OR_RETURN(auto items, iterate(v));
  std::string sep;
  if (args[0]) { GB_ASSIGN_OR_RETURN(sep, soft_str(*args[0])); }
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k) {
    Value item = items[k];
    if (args[1]) { GB_ASSIGN_OR_RETURN(item, get_path(in, item, *args[1])); }
    GB_ASSIGN_OR_RETURN(auto s, soft_str(item));
    if (k) out += sep;
    out += s;
  }
  return Value::string(std::move(out));
}

// The key a sort/unique/min/max filter compares: the attribute, lower-cased unless case_sensitive.
Result<Value> sort_key(Interpreter& in, const Value& item, const std::optional<Value>& attribute, bool case_sensitive) {
  Value k = item;
  if (attribute && !attribute->is_none()) { GB_ASSIGN_OR_RETURN(k, get_path(in, item, *attribute)); }
  if (!case_sensitive && k.is_string()) {
    GB_ASSIGN_OR_RETURN(auto lower, py_case(k.s, "lower"));
    k = Value::string(lower);
  }
  return k;
}

Result<std::vector<Value>> sorted(Interpreter& in, std::vector<Value> items, const std::optional<Value>& attribute,
                                  bool case_sensitive, bool reverse) {
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& it : items) {
    GB_ASSIGN_OR_RETURN(auto k, sort_key(in, it, attribute, case_sensitive));
    keyed.emplace_back(std::move(k), std::move(it));
  }
  Status err;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    auto c = reverse ? compare(y.first, x.first) : compare(x.first, y.first);
    if (!c.ok()) { if (err.ok()) err = c.error(); return false; }
    return *c < 0;
  });
  GB_RETURN_IF_ERROR(err);
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

Result<Value> min_max(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"case_sensitive", "attribute"}, want_max ? "max" : "min"));
  GB_ASSIGN_OR_RETURN(auto items, iterate(v));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  bool cs = args[0] && truthy(*args[0]);
  std::size_t best = 0;
  GB_ASSIGN_OR_RETURN(auto best_key, sort_key(in, items[0], args[1], cs));
  for (std::size_t k = 1; k < items.size(); ++k) {
    GB_ASSIGN_OR_RETURN(auto key, sort_key(in, items[k], args[1], cs));
    GB_ASSIGN_OR_RETURN(int c, compare(key, best_key));
    if (want_max ? c > 0 : c < 0) { best = k; best_key = key; }
  }
  return items[best];
}

Result<Value> round_filter(Interpreter&, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"precision", "method"}, "round"));
  std::int64_t precision = args[0] && is_int(*args[0]) ? ival(*args[0]) : 0;
  std::string method = args[1] && args[1]->is_string() ? args[1]->s : "common";
  if (!v.is_number()) return type_error("type " + type_name(v) + " doesn't define __round__ method");
  double x = is_int(v) ? static_cast<double>(ival(v)) : v.f;
  if (method == "common") {
    if (is_int(v)) return Value::integer(ival(v));
    if (precision < 0 || precision > 15) return unsupported("|round with precision outside 0..15");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);  // correctly rounded, ties to even
    return Value::real(std::strtod(buf, nullptr));
  }
  if (method != "ceil" && method != "floor")
    return make_error(ErrorCode::kInvalidArgument, "FilterArgumentError: method must be common, ceil or floor");
  double scale = std::pow(10.0, static_cast<double>(precision));
  double r = method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale);
  return Value::real(r / scale);
}

Result<Value> indent_filter(Interpreter&, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"width", "first", "blank"}, "indent"));
  std::string ind = "    ";
  if (args[0]) {
    if (args[0]->is_string()) ind = args[0]->s;
    else if (is_int(*args[0])) ind = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, ival(*args[0]))), ' ');
    else return type_error("indent width must be int or str");
  }
  if (v.is_undefined()) return undefined_error(v);
  if (!v.is_string()) return type_error("unsupported operand type(s) for +=: '" + type_name(v) + "' and 'str'");
  std::string s = v.s + "\n";  // Jinja2 appends a newline before splitlines()
  auto lines = py_splitlines(s, false);
  std::string out;
  if (args[2] && truthy(*args[2])) {
    for (std::size_t k = 0; k < lines.size(); ++k) out += (k ? "\n" + ind : "") + lines[k];
  } else {
    out = lines.empty() ? "" : lines[0];
    for (std::size_t k = 1; k < lines.size(); ++k) out += "\n" + (lines[k].empty() ? "" : ind + lines[k]);
  }
  if (args[1] && truthy(*args[1])) out = ind + out;
  return Value::string(std::move(out));
}

Result<Value> string_filter(const std::string& name, const Value& v, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto s, soft_str(v));
  if (name == "trim") {
    GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"chars"}, "trim"));
    if (args[0] && !args[0]->is_none()) {
      GB_ASSIGN_OR_RETURN(auto chars, soft_str(*args[0]));
      return Value::string(py_strip(s, &chars, true, true));
    }
    return Value::string(py_strip(s, nullptr, true, true));
  }
  GB_RETURN_IF_ERROR(bind_args(a, {}, name).status());
  if (name == "string" || name == "safe") return Value::string(s);
  if (name == "title") { GB_ASSIGN_OR_RETURN(auto r, jinja_title(s)); return Value::string(r); }
  GB_ASSIGN_OR_RETURN(auto r, py_case(s, name));  // upper, lower, capitalize
  return Value::string(r);
}

const std::map<std::string, Filter>& filters() {
  static const std::map<std::string, Filter> kFilters = {
      {"abs", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         if (is_int(v)) { if (ival(v) == INT64_MIN) return unsupported("integer beyond 64 bits"); return Value::integer(std::llabs(ival(v))); }
         if (v.kind == Value::Kind::kFloat) return Value::real(std::fabs(v.f));
         return type_error("bad operand type for abs(): '" + type_name(v) + "'");
       }},
      {"capitalize", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("capitalize", v, a); }},
      {"count", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto n, length(v)); return Value::integer(n); }},
      {"default", [](Interpreter&, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"default_value", "boolean"}, "default"));
         bool boolean = args[1] && truthy(*args[1]);
         if (v.is_undefined() || (boolean && !truthy(v))) return args[0] ? *args[0] : Value::string("");
         return v;
       }},
      {"dictsort", [](Interpreter& in, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"case_sensitive", "by", "reverse"}, "dictsort"));
         if (!v.is_dict()) return type_error("dictsort requires a mapping");
         bool by_value = args[1] && args[1]->is_string() && args[1]->s == "value";
         std::vector<Value> pairs;
         for (const auto& [k, x] : v.dict->items) pairs.push_back(Value::sequence({k, x}, SeqKind::kTuple));
         GB_ASSIGN_OR_RETURN(auto out, sorted(in, std::move(pairs), Value::integer(by_value ? 1 : 0),
                                             args[0] && truthy(*args[0]), args[2] && truthy(*args[2])));
         return Value::sequence(std::move(out));
       }},
      {"first", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         if (items.empty()) return Value::undefined("No first item, sequence was empty.");
         return items.front();
       }},
      {"float", float_filter},
      {"int", int_filter},
      {"items", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         if (v.is_undefined()) return generator({});
         if (!v.is_dict()) return type_error("Can only get item pairs from a mapping.");
         std::vector<Value> out;
         for (const auto& [k, x] : v.dict->items) out.push_back(Value::sequence({k, x}, SeqKind::kTuple));
         return generator(std::move(out));
       }},
      {"join", join_filter},
      {"last", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         if (v.is_seq() && v.seq_kind == SeqKind::kIterator) return type_error("'generator' object is not reversible");
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         if (items.empty()) return Value::undefined("No last item, sequence was empty.");
         return items.back();
       }},
      {"length", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto n, length(v)); return Value::integer(n); }},
      {"list", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto items, iterate(v)); return Value::sequence(std::move(items)); }},
      {"lower", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("lower", v, a); }},
      {"map", map_filter},
      {"max", [](Interpreter& in, const Value& v, CallArgs& a) { return min_max(in, v, a, true); }},
      {"min", [](Interpreter& in, const Value& v, CallArgs& a) { return min_max(in, v, a, false); }},
      {"reject", [](Interpreter& in, const Value& v, CallArgs& a) { return select_or_reject(in, v, a, false, false); }},
      {"rejectattr", [](Interpreter& in, const Value& v, CallArgs& a) { return select_or_reject(in, v, a, true, false); }},
      {"replace", [](Interpreter&, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"old", "new", "count"}, "replace"));
         if (!args[0] || !args[1]) return type_error("replace() missing required arguments");
         GB_ASSIGN_OR_RETURN(auto s, soft_str(v));
         GB_ASSIGN_OR_RETURN(auto old, soft_str(*args[0]));
         GB_ASSIGN_OR_RETURN(auto repl, soft_str(*args[1]));
         std::int64_t count = args[2] && is_int(*args[2]) ? ival(*args[2]) : -1;
         return Value::string(py_replace(s, old, repl, count));
       }},
      {"reverse", [](Interpreter&, const Value& v, CallArgs&) -> Result<Value> {
         if (v.is_string()) { auto c = decode_utf8(v.s); std::reverse(c.begin(), c.end()); return Value::string(encode_utf8(c)); }
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         std::reverse(items.begin(), items.end());
         // Python: reversed() gives an iterator; a generator has none, so Jinja builds a list.
         bool was_generator = v.is_seq() && v.seq_kind == SeqKind::kIterator;
         return Value::sequence(std::move(items), was_generator ? SeqKind::kList : SeqKind::kIterator);
       }},
      {"round", round_filter},
      {"safe", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("safe", v, a); }},
      {"select", [](Interpreter& in, const Value& v, CallArgs& a) { return select_or_reject(in, v, a, false, true); }},
      {"selectattr", [](Interpreter& in, const Value& v, CallArgs& a) { return select_or_reject(in, v, a, true, true); }},
      {"sort", [](Interpreter& in, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"reverse", "case_sensitive", "attribute"}, "sort"));
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         GB_ASSIGN_OR_RETURN(auto out, sorted(in, std::move(items), args[2], args[1] && truthy(*args[1]),
                                             args[0] && truthy(*args[0])));
         return Value::sequence(std::move(out));
       }},
      {"string", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("string", v, a); }},
      {"sum", [](Interpreter& in, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"attribute", "start"}, "sum"));
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         Value acc = args[1] ? *args[1] : Value::integer(0);
         for (const auto& it : items) {
           Value x = it;
           if (args[0]) { GB_ASSIGN_OR_RETURN(x, get_path(in, it, *args[0])); }
           GB_ASSIGN_OR_RETURN(acc, binary_op("+", acc, x));
         }
         return acc;
       }},
      {"title", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("title", v, a); }},
      {"tojson", tojson_filter},
      {"trim", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("trim", v, a); }},
      {"unique", [](Interpreter& in, const Value& v, CallArgs& a) -> Result<Value> {
         GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"case_sensitive", "attribute"}, "unique"));
         GB_ASSIGN_OR_RETURN(auto items, iterate(v));
         std::vector<Value> seen, out;
         for (const auto& it : items) {
           GB_ASSIGN_OR_RETURN(auto key, sort_key(in, it, args[1], args[0] && truthy(*args[0])));
           if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) continue;
           seen.push_back(key);
           out.push_back(it);
         }
         return generator(std::move(out));
       }},
      {"upper", [](Interpreter&, const Value& v, CallArgs& a) { return string_filter("upper", v, a); }},
      {"indent", indent_filter},
  };
  return kFilters;
}

const std::set<std::string>& unsupported_filters() {
  static const std::set<std::string> k = {"attr", "batch", "center", "e", "escape", "filesizeformat", "forceescape",
                                          "format", "groupby", "pprint", "random", "slice", "striptags", "truncate",
                                          "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr"};
  return k;
}

Result<bool> compare_test(const std::string& op, const Value& v, CallArgs& a) {
  if (a.pos.size() != 1) return type_error("test '" + op + "' takes one argument");
  GB_ASSIGN_OR_RETURN(auto r, binary_op(op, v, a.pos[0]));
  return r.b;
}

const std::map<std::string, Test>& tests() {
  static const std::map<std::string, Test> kTests = [] {
    std::map<std::string, Test> t;
    auto pred = [](std::function<bool(const Value&)> f) {
      return Test([f](Interpreter&, const Value& v, CallArgs&) -> Result<bool> { return f(v); });
    };
    using K = Value::Kind;
    t["defined"] = pred([](const Value& v) { return !v.is_undefined(); });
    t["undefined"] = pred([](const Value& v) { return v.is_undefined(); });
    t["none"] = pred([](const Value& v) { return v.is_none(); });
    t["boolean"] = pred([](const Value& v) { return v.kind == K::kBool; });
    t["false"] = pred([](const Value& v) { return v.kind == K::kBool && !v.b; });
    t["true"] = pred([](const Value& v) { return v.kind == K::kBool && v.b; });
    t["integer"] = pred([](const Value& v) { return v.kind == K::kInt; });
    t["float"] = pred([](const Value& v) { return v.kind == K::kFloat; });
    t["number"] = pred([](const Value& v) { return v.is_number(); });
    t["string"] = pred([](const Value& v) { return v.is_string(); });
    t["mapping"] = pred([](const Value& v) { return v.is_dict(); });
    t["iterable"] = pred([](const Value& v) { return v.is_undefined() || v.is_string() || v.is_seq() || v.is_dict(); });
    t["sequence"] = pred([](const Value& v) {
      return v.is_undefined() || v.is_string() || v.is_dict() ||
             (v.is_seq() && v.seq_kind != SeqKind::kIterator && v.seq_kind != SeqKind::kView);
    });
    // Undefined defines __call__ (to raise), so Python's callable() says True.
    t["callable"] = pred([](const Value& v) { return v.kind == K::kCallable || v.is_undefined(); });
    auto parity = [](bool odd) {  // Jinja2: value % 2 == 1 / == 0, with Python's %
      return Test([odd](Interpreter&, const Value& v, CallArgs&) -> Result<bool> {
        GB_ASSIGN_OR_RETURN(auto r, binary_op("%", v, Value::integer(2)));
        return equals(r, Value::integer(odd ? 1 : 0));
      });
    };
    t["odd"] = parity(true);
    t["even"] = parity(false);
    t["divisibleby"] = [](Interpreter&, const Value& v, CallArgs& a) -> Result<bool> {
      if (a.pos.size() != 1) return type_error("divisibleby takes one argument");
      GB_ASSIGN_OR_RETURN(auto r, binary_op("%", v, a.pos[0]));
      return !truthy(r);
    };
    for (auto [name, op] : std::vector<std::pair<const char*, const char*>>{
             {"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="}, {"lt", "<"}, {"lessthan", "<"},
             {"<", "<"}, {"le", "<="}, {"<=", "<="}, {"gt", ">"}, {"greaterthan", ">"}, {">", ">"}, {"ge", ">="},
             {">=", ">="}, {"in", "in"}}) {
      std::string o = op;
      t[name] = [o](Interpreter&, const Value& v, CallArgs& a) { return compare_test(o, v, a); };
    }
    t["sameas"] = [](Interpreter&, const Value& v, CallArgs& a) -> Result<bool> {
      if (a.pos.size() != 1) return type_error("sameas takes one argument");
      const Value& o = a.pos[0];
      if (v.kind != o.kind) return false;
      switch (v.kind) {
        case K::kNone: return true;
        case K::kBool: return v.b == o.b;
        case K::kSeq: return v.seq == o.seq;
        case K::kDict: case K::kNamespace: return v.dict == o.dict;
        case K::kCallable: return v.fn == o.fn;
        default: return unsupported("'sameas' on " + type_name(v) + " (identity of Python scalars)");
      }
    };
    auto case_test = [](bool lower) {
      return Test([lower](Interpreter&, const Value& v, CallArgs&) -> Result<bool> {
        GB_ASSIGN_OR_RETURN(auto s, to_str(v));
        GB_ASSIGN_OR_RETURN(auto conv, py_case(s, lower ? "lower" : "upper"));
        bool any_cased = std::any_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
        return any_cased && conv == s;
      });
    };
    t["lower"] = case_test(true);
    t["upper"] = case_test(false);
    return t;
  }();
  return kTests;
}

}  // namespace

bool has_filter(const std::string& name) {
  return filters().count(name) || name == "d" || name == "e" || unsupported_filters().count(name);
}
bool has_test(const std::string& name) { return tests().count(name) || name == "escaped"; }

Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& v, CallArgs& args) {
  const std::string& n = name == "d" ? std::string("default") : name;
  auto it = filters().find(n);
  if (it != filters().end()) return it->second(in, v, args);
  if (unsupported_filters().count(name) || name == "e") return unsupported("filter '" + name + "'");
  return make_error(ErrorCode::kInvalidArgument, "TemplateAssertionError: No filter named '" + name + "'.");
}

Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& v, CallArgs& args) {
  auto it = tests().find(name);
  if (it != tests().end()) return it->second(in, v, args);
  if (name == "escaped") return unsupported("test 'escaped'");
  return make_error(ErrorCode::kInvalidArgument, "TemplateAssertionError: No test named '" + name + "'.");
}

}  // namespace glassbox::chat_template
