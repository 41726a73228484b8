// Jinja2's global functions, filters and tests as Hugging Face's environment defines them:
// Jinja2 3.1's builtins plus raise_exception, strftime_now and the tojson override.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "chat_template/interpreter.h"
#include "chat_template/text.h"

namespace glassbox::chat_template {

namespace {

Error unsupported_builtin(const std::string& what) {
  return make_error(ErrorCode::kUnsupported, "unsupported construct: " + what,  "",
                    "glassbox renders the subset of Jinja2 that chat templates use (docs/generation.md)");
}

Result<Value> strftime_now(Interpreter& in, CallArgs& a) {
  GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"format"}, "strftime_now"));
  if (!args[0] || !args[0]->is_string()) return type_error("strftime_now() argument must be str");
  const Clock& c = in.clock();
  std::int64_t micros = c.fixed ? c.unix_micros
                                : std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::system_clock::now().time_since_epoch()).count();
  std::int64_t secs = micros / 1000000, frac = micros % 1000000;
  if (frac < 0) { frac += 1000000; --secs; }
  auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (c.local_time_zone) localtime_r(&t, &tm); else gmtime_r(&t, &tm);
  // Python's datetime.now() is naive: %z and %Z are empty; %f is microseconds; the rest is C strftime.
  std::string fmt;
  const std::string& f = args[0]->s;
  for (std::size_t k = 0; k < f.size(); ++k) {
    if (f[k] != '%' || k + 1 >= f.size()) { fmt += f[k]; continue; }
    char d = f[++k];
    if (d == 'z' || d == 'Z') continue;
    if (d == 'f') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "%06lld", static_cast<long long>(frac));
      fmt += buf;
      continue;
    }
    fmt += '%';
    fmt += d;
  }
  if (fmt.empty()) return Value::string("");
  std::string out(256 + fmt.size() * 8, '\0');
  std::size_t n = std::strftime(out.data(), out.size(), fmt.c_str(), &tm);
  out.resize(n);
  return Value::string(std::move(out));
}

Result<Value> range_fn(Interpreter& in, CallArgs& a) {
  if (!a.kw.empty()) return type_error("range() takes no keyword arguments");
  std::int64_t v[3] = {0, 0, 1};
  for (const auto& x : a.pos)
    if (x.kind != Value::Kind::kInt && x.kind != Value::Kind::kBool)
      return type_error("'" + type_name(x) + "' object cannot be interpreted as an integer");
  auto iv = [](const Value& x) { return x.kind == Value::Kind::kBool ? std::int64_t{x.b} : x.i; };
  if (a.pos.size() == 1) v[1] = iv(a.pos[0]);
  else if (a.pos.size() == 2 || a.pos.size() == 3) {
    v[0] = iv(a.pos[0]);
    v[1] = iv(a.pos[1]);
    if (a.pos.size() == 3) v[2] = iv(a.pos[2]);
  } else {
    return type_error("range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
  }
  if (v[2] == 0) return make_error(ErrorCode::kInvalidArgument, "ValueError: range() arg 3 must not be zero");
  std::vector<Value> out;
  for (std::int64_t x = v[0]; v[2] > 0 ? x < v[1] : x > v[1]; x += v[2]) {
    if (static_cast<std::int64_t>(out.size()) >= in.limits().max_range)
      return make_error(ErrorCode::kLimitExceeded, "OverflowError: Range too big. The sandbox blocks ranges larger than " +
                                                        std::to_string(in.limits().max_range) + ".");
    out.push_back(Value::integer(x));
  }
  return Value::sequence(std::move(out), SeqKind::kRange);
}

Result<Dict> dict_from_args(CallArgs& a, const std::string& what) {
  Dict d;
  if (a.pos.size() > 1) return type_error(what + " expected at most 1 positional argument");
  if (!a.pos.empty()) {
    const Value& src = a.pos[0];
    if (src.is_dict()) {
      d = *src.dict;
    } else {
      GB_ASSIGN_OR_RETURN(auto items, iterate(src));
      for (const auto& it : items) {
        GB_ASSIGN_OR_RETURN(auto kv, iterate(it));
        if (kv.size() != 2) return type_error(what + ": sequence elements must have length 2");
        d.set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [k, v] : a.kw) d.set(Value::string(k), v);
  return d;
}

}  // namespace

Dict global_functions() {
  Dict g;
  g.set(Value::string("range"), Value::callable("range", range_fn));
  g.set(Value::string("namespace"), Value::callable("namespace", [](Interpreter&, CallArgs& a) -> Result<Value> {
          GB_ASSIGN_OR_RETURN(auto d, dict_from_args(a, "namespace"));
          return Value::namespace_of(std::move(d));
        }));
  g.set(Value::string("dict"), Value::callable("dict", [](Interpreter&, CallArgs& a) -> Result<Value> {
          GB_ASSIGN_OR_RETURN(auto d, dict_from_args(a, "dict"));
          return Value::dictionary(std::move(d));
        }));
  g.set(Value::string("raise_exception"), Value::callable("raise_exception", [](Interpreter&, CallArgs& a) -> Result<Value> {
          GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"message"}, "raise_exception"));
          std::string msg;
          if (args[0]) { GB_ASSIGN_OR_RETURN(msg, to_str(*args[0])); }
          return make_error(ErrorCode::kInvalidArgument, "TemplateError: " + msg, "",
                            "the messages break a rule of this model's chat template");
        }));
  g.set(Value::string("strftime_now"), Value::callable("strftime_now", strftime_now));
  g.set(Value::string("joiner"), Value::callable("joiner", [](Interpreter&, CallArgs& a) -> Result<Value> {
          GB_ASSIGN_OR_RETURN(auto args, bind_args(a, {"sep"}, "joiner"));
          std::string sep = ", ";
          if (args[0]) { GB_ASSIGN_OR_RETURN(sep, to_str(*args[0])); }
          auto used = std::make_shared<bool>(false);
          return Value::callable("joiner", [sep, used](Interpreter&, CallArgs&) -> Result<Value> {
            if (!*used) { *used = true; return Value::string(""); }
            return Value::string(sep);
          });
        }));
  for (const char* name : {"cycler", "lipsum"})
    g.set(Value::string(name), Value::callable(name, [name](Interpreter&, CallArgs&) -> Result<Value> {
            return unsupported_builtin(std::string(name) + "()");
          }));
  return g;
}

}  // namespace glassbox::chat_template
