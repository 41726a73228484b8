// Renders a parsed chat template: scopes, loops, macros, and the evaluation of expressions
// with Jinja2's semantics (default Undefined, ImmutableSandboxedEnvironment rules).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chat_template/ast.h"
#include "chat_template/value.h"

namespace glassbox::chat_template {

// What strftime_now() reads: a fixed or current clock, rendered in UTC or the local zone.
struct Clock {
  bool fixed = false;             // true: `unix_micros` below; false: the system clock at call time
  std::int64_t unix_micros = 0;   // microseconds since 1970-01-01T00:00:00Z
  bool local_time_zone = false;   // false: UTC; true: the process's local time zone (TZ)
};

struct RenderLimits {
  std::size_t max_output_bytes = 64u << 20;  // a prompt larger than this is a runaway loop, not a chat
  int max_call_depth = 200;                  // macro recursion
  std::int64_t max_range = 100000;           // Jinja2's sandbox refuses range() longer than this
  std::int64_t max_loop_iterations = 10000000;  // all loops of one render: a chat needs thousands, a runaway never ends
};

struct Scope {
  std::map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  const Value* find(const std::string& name) const;
};

class Interpreter {
 public:
  Interpreter(Clock clock, RenderLimits limits) : clock_(clock), limits_(limits) {}

  // Renders `body` with the variables in `context` (messages, tools, bos_token, ...).
  Result<std::string> render(const Body& body, const Dict& context);

  Result<Value> eval(const Expr& e, const std::shared_ptr<Scope>& s);
  Result<Value> call(const Value& fn, CallArgs& args);
  Result<Value> getattr(const Value& obj, const std::string& name);
  Result<Value> getitem(const Value& obj, const Value& key);
  Result<Value> filter(const std::string& name, const Value& subject, CallArgs& args);
  Result<bool> test(const std::string& name, const Value& subject, CallArgs& args);
  const Clock& clock() const { return clock_; }
  const RenderLimits& limits() const { return limits_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  Result<Flow> exec(const Body& body, const std::shared_ptr<Scope>& s, std::string& out);
  Result<Flow> exec_node(const Node& n, const std::shared_ptr<Scope>& s, std::string& out);
  Result<Flow> exec_for(const Node& n, const std::shared_ptr<Scope>& s, std::string& out);
  Status exec_macro_def(const Node& n, const std::shared_ptr<Scope>& s);
  Result<Value> eval_inner(const Expr& e, const std::shared_ptr<Scope>& s);
  Result<Value> eval_binary(const Expr& e, const std::shared_ptr<Scope>& s);
  Result<CallArgs> eval_args(const Expr& e, std::size_t first, const std::shared_ptr<Scope>& s);
  Status append(std::string& out, const std::string& text);

  Clock clock_;
  RenderLimits limits_;
  int depth_ = 0;
  std::int64_t iterations_ = 0;
  // Evaluating a {{ }} whose expression is constant: Jinja2 folds it at compile time, where a slice
  // goes through environment.getitem (non-sliceable -> Undefined) instead of a raising Python subscript.
  bool folding_constant_ = false;
};

// Binary operators with Python semantics: + - * / // % ** ~ == != < <= > >= in notin.
Result<Value> binary_op(const std::string& op, const Value& a, const Value& b);

// Builtins (builtins.cpp, methods.cpp): global functions, filters, tests, methods of str/dict/list.
Dict global_functions();
bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& v, CallArgs& args);
Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& v, CallArgs& args);
// A bound method of a str/dict/list, Undefined when the type has no such attribute, or an error for a
// Python method glassbox does not implement.
Result<Value> bound_method(const Value& obj, const std::string& name);

// Python json.dumps(v, ensure_ascii, indent, separators, sort_keys) for template values.
struct JsonDumpOptions {
  bool ensure_ascii = false;         // Hugging Face's tojson override: False
  std::optional<std::string> indent; // nullopt = one line
  std::string item_separator = ", "; // json.dumps default (", " without indent, "," with)
  std::string key_separator = ": ";
  bool sort_keys = false;
};
Result<std::string> json_dumps(const Value& v, const JsonDumpOptions& o);

Error undefined_error(const Value& undefined);
Error type_error(std::string what);

}  // namespace glassbox::chat_template
