// Methods of str, dict and list that chat templates call (`message.content.strip()`,
// `tool.get('x')`), with the ImmutableSandboxedEnvironment's rule: methods that mutate a
// list or dict are refused (Jinja2 raises SecurityError).
#include <algorithm>
#include <set>

#include "chat_template/interpreter.h"
#include "chat_template/text.h"

namespace glassbox::chat_template {

namespace {

using Method = std::function<Result<Value>(const Value& self, CallArgs& a)>;

Value method(const Value& self, const std::string& name, Method m) {
  return Value::callable(type_name(self) + "." + name,
                         [self, m](Interpreter&, CallArgs& a) -> Result<Value> { return m(self, a); });
}

Result<std::string> str_arg(const std::optional<Value>& v, const std::string& what) {
  if (!v || !v->is_string()) return type_error(what + " must be str, not " + (v ? type_name(*v) : "nothing"));
  return v->s;
}

Result<std::int64_t> int_arg(const std::optional<Value>& v, std::int64_t dflt, const std::string& what) {
  if (!v || v->is_none()) return dflt;
  if (v->kind == Value::Kind::kInt) return v->i;
  if (v->kind == Value::Kind::kBool) return static_cast<std::int64_t>(v->b);
  return type_error(what + " must be an integer, not " + type_name(*v));
}

Value strings(const std::vector<std::string>& parts) {
  std::vector<Value> out;
  for (const auto& p : parts) out.push_back(Value::string(p));
  return Value::sequence(std::move(out));
}

Result<Value> affix_test(const Value& self, CallArgs& a, bool prefix, const char* name) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"prefix", "start", "end"}, std::string("str.") + name));
  if (args[1] || args[2]) return make_error(ErrorCode::kUnsupported, std::string("str.") + name + " with start/end");
  std::vector<std::string> options;
  if (args[0] && args[0]->is_seq() && args[0]->seq_kind == SeqKind::kTuple) {
    for (const auto& v : *args[0]->seq) {
      GB_ASSIGN_OR_RETURN(auto s, str_arg(v, std::string(name) + " tuple item"));
      options.push_back(s);
    }
  } else {
    GB_ASSIGN_OR_RETURN(auto s, str_arg(args[0], std::string(name) + " first arg"));
    options.push_back(s);
  }
  for (const auto& o : options) {
    if (o.size() > self.s.size()) continue;
    if (prefix ? self.s.compare(0, o.size(), o) == 0 : self.s.compare(self.s.size() - o.size(), o.size(), o) == 0)
      return Value::boolean(true);
  }
  return Value::boolean(false);
}

Result<Value> strip_method(const Value& self, CallArgs& a, bool left, bool right) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"chars"}, "str.strip"));
  if (args[0] && !args[0]->is_none()) {
    GB_ASSIGN_OR_RETURN(auto chars, str_arg(args[0], "strip arg"));
    return Value::string(py_strip(self.s, &chars, left, right));
  }
  return Value::string(py_strip(self.s, nullptr, left, right));
}

Result<Value> split_method(const Value& self, CallArgs& a, bool from_right) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"sep", "maxsplit"}, "str.split"));
  GB_ASSIGN_OR_RETURN(auto maxsplit, int_arg(args[1], -1, "maxsplit"));
  if (args[0] && !args[0]->is_none()) {
    GB_ASSIGN_OR_RETURN(auto sep, str_arg(args[0], "separator"));
    GB_ASSIGN_OR_RETURN(auto parts, py_split(self.s, &sep, maxsplit, from_right));
    return strings(parts);
  }
  GB_ASSIGN_OR_RETURN(auto parts, py_split(self.s, nullptr, maxsplit, from_right));
  return strings(parts);
}

Result<Value> char_class(const Value& self, const std::string& name) {
  auto cps = decode_utf8(self.s);
  if (cps.empty()) return Value::boolean(false);
  bool any_cased = false, ok = true;
  for (char32_t c : cps) {
    if (c >= 0x80 && name != "isspace")
      return make_error(ErrorCode::kUnsupported, "str." + name + "() of non-ASCII text (Unicode character classes)");
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") ok = ok && digit;
    else if (name == "isalpha") ok = ok && (upper || lower);
    else if (name == "isalnum") ok = ok && (upper || lower || digit);
    else if (name == "isspace") ok = ok && py_isspace(c);
    else if (name == "islower") { ok = ok && !upper; any_cased = any_cased || lower; }
    else if (name == "isupper") { ok = ok && !lower; any_cased = any_cased || upper; }
  }
  if (name == "islower" || name == "isupper") ok = ok && any_cased;
  return Value::boolean(ok);
}

Result<Value> string_method(const Value& self, const std::string& name) {
  if (name == "startswith" || name == "endswith") {
    bool prefix = name == "startswith";
    return method(self, name, [prefix](const Value& s, CallArgs& a) {
      return affix_test(s, a, prefix, prefix ? "startswith" : "endswith");
    });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip", right = name != "lstrip";
    return method(self, name, [left, right](const Value& s, CallArgs& a) { return strip_method(s, a, left, right); });
  }
  if (name == "split" || name == "rsplit") {
    bool right = name == "rsplit";
    return method(self, name, [right](const Value& s, CallArgs& a) { return split_method(s, a, right); });
  }
  if (name == "splitlines")
    return method(self, name, [](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"keepends"}, "str.splitlines"));
      return strings(py_splitlines(s.s, args[0] && truthy(*args[0])));
    });
  if (name == "replace")
    return method(self, name, [](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"old", "new", "count"}, "str.replace"));
      GB_ASSIGN_OR_RETURN(auto old, str_arg(args[0], "replace arg 1"));
      GB_ASSIGN_OR_RETURN(auto repl, str_arg(args[1], "replace arg 2"));
      GB_ASSIGN_OR_RETURN(auto count, int_arg(args[2], -1, "count"));
      return Value::string(py_replace(s.s, old, repl, count));
    });
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize" || name == "swapcase")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_RETURN_IF_ERROR(bind_args(a, {}, "str." + name).status());
      GB_ASSIGN_OR_RETURN(auto r, py_case(s.s, name));
      return Value::string(std::move(r));
    });
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"sub"}, "str." + name));
      GB_ASSIGN_OR_RETURN(auto sub, str_arg(args[0], name + " arg"));
      if (name == "count") return Value::integer(py_count(s.s, sub));
      std::int64_t at = py_find(s.s, sub, name[0] == 'r');
      if (at < 0 && name.find("index") != std::string::npos)
        return make_error(ErrorCode::kInvalidArgument, "ValueError: substring not found");
      return Value::integer(at);
    });
  if (name == "join")
    return method(self, name, [](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"iterable"}, "str.join"));
      if (!args[0]) return type_error("str.join() takes exactly one argument");
      GB_ASSIGN_OR_RETURN(auto items, iterate(*args[0]));
      std::string out;
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (!items[k].is_string())
          return type_error("sequence item " + std::to_string(k) + ": expected str instance, " +
                            type_name(items[k]) + " found");
        if (k) out += s.s;
        out += items[k].s;
      }
      return Value::string(std::move(out));
    });
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal" || name == "isalpha" || name == "isalnum" ||
      name == "isspace" || name == "islower" || name == "isupper")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_RETURN_IF_ERROR(bind_args(a, {}, "str." + name).status());
      return char_class(s, name);
    });
  if (name == "removeprefix" || name == "removesuffix")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"affix"}, "str." + name));
      GB_ASSIGN_OR_RETURN(auto affix, str_arg(args[0], name + " arg"));
      if (affix.size() <= s.s.size()) {
        if (name == "removeprefix" && s.s.compare(0, affix.size(), affix) == 0) return Value::string(s.s.substr(affix.size()));
        if (name == "removesuffix" && s.s.compare(s.s.size() - affix.size(), affix.size(), affix) == 0)
          return Value::string(s.s.substr(0, s.s.size() - affix.size()));
      }
      return s;
    });
  static const std::set<std::string> kOtherStrMethods = {
      "casefold", "center", "encode", "expandtabs", "format", "format_map", "isascii", "isidentifier",
      "isprintable", "istitle", "ljust", "maketrans", "partition", "rjust", "rpartition", "translate", "zfill"};
  if (kOtherStrMethods.count(name))
    return make_error(ErrorCode::kUnsupported, "unsupported construct: str." + name + "()");
  return Value::undefined("'str object' has no attribute '" + name + "'");
}

Error unsafe(const Value& self, const std::string& name) {
  return make_error(ErrorCode::kInvalidArgument, "SecurityError: access to attribute '" + name + "' of '" +
                                                     type_name(self) + "' object is unsafe (the sandbox is immutable)");
}

Result<Value> dict_method(const Value& self, const std::string& name) {
  if (name == "get")
    return method(self, name, [](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"key", "default"}, "dict.get"));
      if (!args[0]) return type_error("get expected at least 1 argument, got 0");
      const Value* v = s.dict->find(*args[0]);
      if (v) return *v;
      return args[1] ? *args[1] : Value::none();
    });
  if (name == "items" || name == "keys" || name == "values")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_RETURN_IF_ERROR(bind_args(a, {}, "dict." + name).status());
      std::vector<Value> out;
      for (const auto& [k, v] : s.dict->items) {
        if (name == "keys") out.push_back(k);
        else if (name == "values") out.push_back(v);
        else out.push_back(Value::sequence({k, v}, SeqKind::kTuple));
      }
      return Value::sequence(std::move(out), SeqKind::kView);
    });
  if (name == "copy")
    return method(self, name, [](const Value& s, CallArgs&) -> Result<Value> { return Value::dictionary(*s.dict); });
  if (name == "pop" || name == "popitem" || name == "setdefault" || name == "update" || name == "clear")
    return method(self, name, [name](const Value& s, CallArgs&) -> Result<Value> { return unsafe(s, name); });
  if (name == "fromkeys") return make_error(ErrorCode::kUnsupported, "unsupported construct: dict.fromkeys()");
  return Value::undefined();
}

Result<Value> list_method(const Value& self, const std::string& name) {
  if (self.seq_kind == SeqKind::kIterator || self.seq_kind == SeqKind::kView) return Value::undefined();
  if (name == "index" || name == "count")
    return method(self, name, [name](const Value& s, CallArgs& a) -> Result<Value> {
      GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"value"}, name));
      if (!args[0]) return type_error(name + "() takes exactly one argument");
      std::int64_t count = 0;
      for (std::size_t k = 0; k < s.seq->size(); ++k)
        if (equals((*s.seq)[k], *args[0])) {
          if (name == "index") return Value::integer(static_cast<std::int64_t>(k));
          ++count;
        }
      if (name == "index") return make_error(ErrorCode::kInvalidArgument, "ValueError: value is not in list");
      return Value::integer(count);
    });
  if (self.seq_kind == SeqKind::kList &&
      (name == "append" || name == "extend" || name == "insert" || name == "pop" || name == "remove" ||
       name == "clear" || name == "sort" || name == "reverse"))
    return method(self, name, [name](const Value& s, CallArgs&) -> Result<Value> { return unsafe(s, name); });
  if (self.seq_kind == SeqKind::kList && name == "copy")
    return method(self, name, [](const Value& s, CallArgs&) -> Result<Value> { return Value::sequence(*s.seq); });
  return Value::undefined();
}

}  // namespace

Result<Value> bound_method(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Value::Kind::kString: return string_method(obj, name);
    case Value::Kind::kDict: return dict_method(obj, name);
    case Value::Kind::kSeq: return list_method(obj, name);
    default: return Value::undefined();
  }
}

}  // namespace glassbox::chat_template
