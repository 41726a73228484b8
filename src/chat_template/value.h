// The values a chat template computes with: Python's object model as Jinja2 exposes it
// (None, bool, int, float, str, list, tuple, dict, namespace, callables, Undefined), with
// Python's truthiness, equality, ordering, str() and repr(). Strings are UTF-8; lengths,
// indices and slices count code points as Python does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::chat_template {

struct Value;
struct CallArgs;
class Interpreter;

// A builtin function, bound method or macro. `call` returns the result or a positioned error.
struct Callable {
  std::string name;  // for messages: "range", "str.startswith", "macro 'm'"
  std::function<Result<Value>(Interpreter&, CallArgs&)> call;
};

// How a sequence behaves besides iteration (Python has more types than Jinja templates need).
enum class SeqKind {
  kList,      // list: len, index, truthy when non-empty, repr [a, b]
  kTuple,     // tuple: like list, repr (a, b)
  kIterator,  // generator (select/map/reverse...): no len, no index, always truthy, no str()
  kView,      // dict_keys/values/items: len, truthy when non-empty, no index, no str()
  kRange,     // range(): like a list, but str() refused (Python prints "range(0, 3)")
};

struct Dict;

struct Value {
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kSeq, kDict, kNamespace, kCallable };
  Kind kind = Kind::kUndefined;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string s;                                   // kString; for kUndefined: the hint of what is missing
  SeqKind seq_kind = SeqKind::kList;               // kSeq
  std::shared_ptr<std::vector<Value>> seq;         // kSeq
  std::shared_ptr<Dict> dict;                      // kDict, kNamespace (a namespace's dict is mutable)
  std::shared_ptr<Callable> fn;                    // kCallable

  static Value undefined(std::string hint = {}) { Value v; v.s = std::move(hint); return v; }
  static Value none() { Value v; v.kind = Kind::kNone; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::kBool; v.b = x; return v; }
  static Value integer(std::int64_t x) { Value v; v.kind = Kind::kInt; v.i = x; return v; }
  static Value real(double x) { Value v; v.kind = Kind::kFloat; v.f = x; return v; }
  static Value string(std::string x) { Value v; v.kind = Kind::kString; v.s = std::move(x); return v; }
  static Value sequence(std::vector<Value> items, SeqKind k = SeqKind::kList);
  static Value dictionary(Dict d);
  static Value namespace_of(Dict d);
  static Value callable(std::string name, std::function<Result<Value>(Interpreter&, CallArgs&)> fn);

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool; }
  bool is_seq() const { return kind == Kind::kSeq; }
  bool is_dict() const { return kind == Kind::kDict; }
};

// An insertion-ordered mapping with Python equality on keys (keys are few: linear lookup).
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
  void set(Value key, Value value);
};

// Positional and keyword arguments of a call.
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};

// Binds `args` to the parameters `names` as Python does (positionals first, then keywords);
// an absent argument is nullopt. Too many positionals, an unknown or repeated keyword is an error
// naming `what`.
Result<std::vector<std::optional<Value>>> bind_args(const CallArgs& args, const std::vector<const char*>& names,
                                                    const std::string& what);

bool truthy(const Value& v);
// Python ==.
bool equals(const Value& a, const Value& b);
// Python <: -1/0/+1, or an error for unorderable types (TypeError in Python).
Result<int> compare(const Value& a, const Value& b);
// Python str(v): what {{ v }} prints. Namespaces, callables and generators are refused (their
// Python text holds a memory address).
Result<std::string> to_str(const Value& v);
// Python repr(v).
Result<std::string> to_repr(const Value& v);
// Python repr(float): shortest round-trip digits, 'e' notation outside [1e-4, 1e16).
std::string float_repr(double x);
// Python type name for messages: "str", "dict object", ...
std::string type_name(const Value& v);

// Items of an iterable (str -> characters, dict -> keys, Undefined -> none), or TypeError.
Result<std::vector<Value>> iterate(const Value& v);
// len(v), or TypeError (ints, generators).
Result<std::int64_t> length(const Value& v);

// UTF-8 helpers (code point based, as Python str).
std::vector<char32_t> decode_utf8(const std::string& s);
std::string encode_utf8(const std::vector<char32_t>& cps);
void append_utf8(std::string& out, char32_t cp);
bool valid_utf8(const std::string& s);
// Python str.isspace() for one code point (also what re's \s matches).
bool py_isspace(char32_t c);

}  // namespace glassbox::chat_template
