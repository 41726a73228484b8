// Statement execution and expression evaluation with Jinja2's semantics (see interpreter.h).
#include "chat_template/interpreter.h"

#include <cmath>

namespace glassbox::chat_template {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

Error undefined_error(const Value& undefined) {
  return make_error(ErrorCode::kInvalidArgument,
                    "UndefinedError: " + (undefined.s.empty() ? std::string("value is undefined") : undefined.s),
                    "", "the messages lack a field the template reads, or the template has a bug");
}

Error type_error(std::string what) {
  return make_error(ErrorCode::kInvalidArgument, "TypeError: " + std::move(what));
}

namespace {

// Whether Jinja2's optimizer can fold the expression (Expr.as_const): no variables, calls, inline ifs
// without else, or context filters.
bool is_constant(const Expr& e) {
  if (e.kind == ExprKind::kName || e.kind == ExprKind::kCall) return false;
  if (e.kind == ExprKind::kCond && !e.items[2]) return false;
  if (e.kind == ExprKind::kFilter && (e.name == "map" || e.name == "select" || e.name == "reject" ||
                                      e.name == "selectattr" || e.name == "rejectattr"))
    return false;
  for (const auto& c : e.items)
    if (c && !is_constant(*c)) return false;
  for (const auto& kv : e.kwargs)
    if (!is_constant(*kv.second)) return false;
  return true;
}

}  // namespace

Result<std::string> Interpreter::render(const Body& body, const Dict& context) {
  auto globals = std::make_shared<Scope>();
  for (auto& [k, v] : global_functions().items) globals->vars[k.s] = v;
  auto root = std::make_shared<Scope>();
  root->parent = globals;
  for (const auto& [k, v] : context.items) root->vars[k.s] = v;
  std::string out;
  GB_ASSIGN_OR_RETURN(auto flow, exec(body, root, out));
  (void)flow;
  return out;
}

Status Interpreter::append(std::string& out, const std::string& text) {
  if (out.size() + text.size() > limits_.max_output_bytes)
    return make_error(ErrorCode::kLimitExceeded,
                      "rendered prompt exceeds " + std::to_string(limits_.max_output_bytes) + " bytes", "",
                      "the template loops without bound, or raise the output limit");
  out += text;
  return Status();
}

Result<Interpreter::Flow> Interpreter::exec(const Body& body, const std::shared_ptr<Scope>& s, std::string& out) {
  for (const auto& n : body) {
    GB_ASSIGN_OR_RETURN(Flow f, exec_node(*n, s, out));
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Result<Interpreter::Flow> Interpreter::exec_node(const Node& n, const std::shared_ptr<Scope>& s, std::string& out) {
  switch (n.kind) {
    case NodeKind::kText:
      GB_RETURN_IF_ERROR(append(out, n.text));
      return Flow::kNormal;
    case NodeKind::kOutput: {
      folding_constant_ = is_constant(*n.expr);
      auto folded = eval(*n.expr, s);
      folding_constant_ = false;
      GB_ASSIGN_OR_RETURN(auto v, std::move(folded));
      auto text = to_str(v);
      if (!text.ok()) return std::move(text).take_error().with_where(pos_string(n.expr->pos));
      GB_RETURN_IF_ERROR(append(out, *text));
      return Flow::kNormal;
    }
    case NodeKind::kIf:
      for (const auto& [cond, body] : n.branches) {
        GB_ASSIGN_OR_RETURN(auto c, eval(*cond, s));
        if (truthy(c)) return exec(body, s, out);
      }
      return exec(n.else_body, s, out);
    case NodeKind::kFor: return exec_for(n, s, out);
    case NodeKind::kSet: {
      GB_ASSIGN_OR_RETURN(auto v, eval(*n.expr, s));
      if (n.attr.empty()) {
        s->vars[n.text] = std::move(v);
        return Flow::kNormal;
      }
      const Value* ns = s->find(n.text);
      if (!ns || ns->kind != Value::Kind::kNamespace)
        return make_error(ErrorCode::kInvalidArgument,
                          "TemplateRuntimeError: cannot assign attribute on non-namespace object", pos_string(n.pos));
      ns->dict->set(Value::string(n.attr), std::move(v));
      return Flow::kNormal;
    }
    case NodeKind::kSetBlock: {
      std::string text;
      GB_ASSIGN_OR_RETURN(auto f, exec(n.body, s, text));
      (void)f;
      s->vars[n.text] = Value::string(std::move(text));
      return Flow::kNormal;
    }
    case NodeKind::kMacro: GB_RETURN_IF_ERROR(exec_macro_def(n, s)); return Flow::kNormal;
    case NodeKind::kBreak: return Flow::kBreak;
    case NodeKind::kContinue: return Flow::kContinue;
    case NodeKind::kGeneration: return exec(n.body, s, out);
    case NodeKind::kFilterBlock: {
      std::string text;
      GB_ASSIGN_OR_RETURN(auto f, exec(n.body, s, text));
      (void)f;
      // The chain's innermost filter has a null subject: it receives the rendered body.
      std::vector<const Expr*> chain;
      for (const Expr* e = n.expr.get(); e; e = e->items[0].get()) chain.push_back(e);
      Value v = Value::string(std::move(text));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        GB_ASSIGN_OR_RETURN(auto args, eval_args(**it, 1, s));
        auto r = filter((*it)->name, v, args);
        if (!r.ok()) return std::move(r).take_error().with_where(pos_string((*it)->pos));
        v = std::move(r).value();
      }
      GB_ASSIGN_OR_RETURN(auto str, to_str(v));
      GB_RETURN_IF_ERROR(append(out, str));
      return Flow::kNormal;
    }
  }
  return Flow::kNormal;
}

namespace {

Status bind_targets(const std::vector<std::string>& targets, const Value& item, Scope* scope) {
  if (targets.size() == 1) {
    scope->vars[targets[0]] = item;
    return Status();
  }
  auto parts = iterate(item);
  if (!parts.ok()) return type_error("cannot unpack non-iterable " + type_name(item) + " object");
  if (parts->size() != targets.size())
    return make_error(ErrorCode::kInvalidArgument,
                      "ValueError: expected " + std::to_string(targets.size()) + " values to unpack, got " +
                          std::to_string(parts->size()));
  for (std::size_t k = 0; k < targets.size(); ++k) scope->vars[targets[k]] = (*parts)[k];
  return Status();
}

}  // namespace

Result<Interpreter::Flow> Interpreter::exec_for(const Node& n, const std::shared_ptr<Scope>& s, std::string& out) {
  GB_ASSIGN_OR_RETURN(auto iterable, eval(*n.expr, s));
  auto all = iterate(iterable);
  if (!all.ok()) return std::move(all).take_error().with_where(pos_string(n.expr->pos));
  std::vector<Value> items;
  if (n.cond) {
    for (auto& item : *all) {
      auto scope = std::make_shared<Scope>();
      scope->parent = s;
      auto st = bind_targets(n.targets, item, scope.get());
      if (!st.ok()) return std::move(st).take_error().with_where(pos_string(n.pos));
      GB_ASSIGN_OR_RETURN(auto keep, eval(*n.cond, scope));
      if (truthy(keep)) items.push_back(item);
    }
  } else {
    items = std::move(all).value();
  }
  if (items.empty()) return exec(n.else_body, s, out);
  const auto count = static_cast<std::int64_t>(items.size());
  for (std::int64_t k = 0; k < count; ++k) {
    if (++iterations_ > limits_.max_loop_iterations)
      return make_error(ErrorCode::kLimitExceeded,
                        "loops ran more than " + std::to_string(limits_.max_loop_iterations) + " iterations",
                        pos_string(n.pos), "the template loops without bound");
    auto scope = std::make_shared<Scope>();
    scope->parent = s;
    const Value& item = items[static_cast<std::size_t>(k)];
    auto st = bind_targets(n.targets, item, scope.get());
    if (!st.ok()) return std::move(st).take_error().with_where(pos_string(n.pos));
    Dict loop;
    loop.set(Value::string("index"), Value::integer(k + 1));
    loop.set(Value::string("index0"), Value::integer(k));
    loop.set(Value::string("revindex"), Value::integer(count - k));
    loop.set(Value::string("revindex0"), Value::integer(count - k - 1));
    loop.set(Value::string("first"), Value::boolean(k == 0));
    loop.set(Value::string("last"), Value::boolean(k == count - 1));
    loop.set(Value::string("length"), Value::integer(count));
    loop.set(Value::string("depth"), Value::integer(1));
    loop.set(Value::string("depth0"), Value::integer(0));
    if (k > 0) loop.set(Value::string("previtem"), items[static_cast<std::size_t>(k - 1)]);
    if (k + 1 < count) loop.set(Value::string("nextitem"), items[static_cast<std::size_t>(k + 1)]);
    loop.set(Value::string("cycle"), Value::callable("loop.cycle", [k](Interpreter&, CallArgs& a) -> Result<Value> {
               if (a.pos.empty()) return type_error("no items for cycling given");
               return a.pos[static_cast<std::size_t>(k) % a.pos.size()];
             }));
    loop.set(Value::string("changed"), Value::callable("loop.changed", [](Interpreter&, CallArgs&) -> Result<Value> {
               return make_error(ErrorCode::kUnsupported, "unsupported construct: loop.changed()");
             }));
    scope->vars["loop"] = Value::dictionary(std::move(loop));
    GB_ASSIGN_OR_RETURN(Flow f, exec(n.body, scope, out));
    if (f == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Status Interpreter::exec_macro_def(const Node& n, const std::shared_ptr<Scope>& s) {
  const Node* node = &n;
  // A weak link: the macro lives in the scope it closes over (a strong one would be a cycle).
  std::weak_ptr<Scope> closure = s;
  std::string name = n.text;
  s->vars[name] = Value::callable("macro '" + name + "'", [node, closure](Interpreter& in, CallArgs& a) -> Result<Value> {
    if (a.pos.size() > node->params.size())
      return type_error("macro '" + node->text + "' takes not more than " + std::to_string(node->params.size()) +
                        " argument(s)");
    auto scope = std::make_shared<Scope>();
    scope->parent = closure.lock();
    if (!scope->parent)
      return make_error(ErrorCode::kUnsupported, "unsupported construct: macro '" + node->text +
                                                     "' called after the block that defined it ended");
    std::vector<bool> bound(node->params.size(), false);
    for (std::size_t k = 0; k < a.pos.size(); ++k) {
      scope->vars[node->params[k].first] = a.pos[k];
      bound[k] = true;
    }
    for (auto& [key, v] : a.kw) {
      std::size_t k = 0;
      while (k < node->params.size() && node->params[k].first != key) ++k;
      if (k == node->params.size()) return type_error("macro '" + node->text + "' takes no keyword argument '" + key + "'");
      scope->vars[key] = v;
      bound[k] = true;
    }
    for (std::size_t k = 0; k < node->params.size(); ++k) {
      if (bound[k]) continue;
      if (node->params[k].second) {
        GB_ASSIGN_OR_RETURN(scope->vars[node->params[k].first], in.eval(*node->params[k].second, scope));
      } else {
        scope->vars[node->params[k].first] = Value::undefined("'" + node->params[k].first + "' is undefined");
      }
    }
    if (++in.depth_ > in.limits().max_call_depth) {
      --in.depth_;
      return make_error(ErrorCode::kLimitExceeded, "macro calls nested deeper than " +
                                                       std::to_string(in.limits().max_call_depth));
    }
    std::string text;
    auto flow = in.exec(node->body, scope, text);
    --in.depth_;
    if (!flow.ok()) return std::move(flow).take_error();
    return Value::string(std::move(text));
  });
  return Status();
}

Result<Value> Interpreter::eval(const Expr& e, const std::shared_ptr<Scope>& s) {
  auto r = eval_inner(e, s);
  if (!r.ok() && r.error().where.empty()) return std::move(r).take_error().with_where(pos_string(e.pos));
  return r;
}

Result<CallArgs> Interpreter::eval_args(const Expr& e, std::size_t first, const std::shared_ptr<Scope>& s) {
  CallArgs a;
  for (std::size_t k = first; k < e.items.size(); ++k) {
    GB_ASSIGN_OR_RETURN(auto v, eval(*e.items[k], s));
    a.pos.push_back(std::move(v));
  }
  for (const auto& [key, x] : e.kwargs) {
    GB_ASSIGN_OR_RETURN(auto v, eval(*x, s));
    a.kw.emplace_back(key, std::move(v));
  }
  return a;
}

namespace {

// Python slice indices (step != 0) over a sequence of `n` items.
std::vector<std::size_t> slice_indices(std::int64_t n, const Value& start, const Value& stop, std::int64_t step) {
  auto clamp = [&](const Value& v, bool is_start) -> std::int64_t {
    if (v.kind != Value::Kind::kInt && v.kind != Value::Kind::kBool) {
      if (step > 0) return is_start ? 0 : n;
      return is_start ? n - 1 : -1;
    }
    std::int64_t x = v.kind == Value::Kind::kBool ? v.b : v.i;
    if (x < 0) x += n;
    if (step > 0) return std::clamp<std::int64_t>(x, 0, n);
    return std::clamp<std::int64_t>(x, -1, n - 1);
  };
  std::int64_t a = clamp(start, true), b = clamp(stop, false);
  std::vector<std::size_t> out;
  if (step > 0)
    for (std::int64_t k = a; k < b; k += step) out.push_back(static_cast<std::size_t>(k));
  else
    for (std::int64_t k = a; k > b; k += step) out.push_back(static_cast<std::size_t>(k));
  return out;
}

bool is_int_like(const Value& v) { return v.kind == Value::Kind::kInt || v.kind == Value::Kind::kBool; }
bool is_slice_bound(const Value& v) { return is_int_like(v) || v.is_none() || v.is_undefined(); }

}  // namespace

Result<Value> Interpreter::eval_inner(const Expr& e, const std::shared_ptr<Scope>& s) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.literal;
    case ExprKind::kName: {
      const Value* v = s->find(e.name);
      if (v) return *v;
      return Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const auto& x : e.items) {
        GB_ASSIGN_OR_RETURN(auto v, eval(*x, s));
        items.push_back(std::move(v));
      }
      return Value::sequence(std::move(items), e.kind == ExprKind::kTuple ? SeqKind::kTuple : SeqKind::kList);
    }
    case ExprKind::kDict: {
      Dict d;
      for (std::size_t k = 0; k + 1 < e.items.size(); k += 2) {
        GB_ASSIGN_OR_RETURN(auto key, eval(*e.items[k], s));
        GB_ASSIGN_OR_RETURN(auto v, eval(*e.items[k + 1], s));
        if (key.kind == Value::Kind::kSeq && key.seq_kind != SeqKind::kTuple) return type_error("unhashable type: 'list'");
        if (key.kind == Value::Kind::kDict) return type_error("unhashable type: 'dict'");
        d.set(std::move(key), std::move(v));
      }
      return Value::dictionary(std::move(d));
    }
    case ExprKind::kGetAttr: {
      GB_ASSIGN_OR_RETURN(auto obj, eval(*e.items[0], s));
      return getattr(obj, e.name);
    }
    case ExprKind::kGetItem: {
      GB_ASSIGN_OR_RETURN(auto obj, eval(*e.items[0], s));
      GB_ASSIGN_OR_RETURN(auto key, eval(*e.items[1], s));
      return getitem(obj, key);
    }
    case ExprKind::kSlice: {
      GB_ASSIGN_OR_RETURN(auto obj, eval(*e.items[0], s));
      Value parts[3];
      for (int k = 0; k < 3; ++k)
        if (e.items[static_cast<std::size_t>(k) + 1]) {
          GB_ASSIGN_OR_RETURN(parts[k], eval(*e.items[static_cast<std::size_t>(k) + 1], s));
        }
      if (obj.is_undefined()) return undefined_error(obj);
      for (const auto& p : parts)
        if (!is_slice_bound(p)) return type_error("slice indices must be integers or None or have an __index__ method");
      std::int64_t step = is_int_like(parts[2]) ? (parts[2].kind == Value::Kind::kBool ? parts[2].b : parts[2].i) : 1;
      if (step == 0) return make_error(ErrorCode::kInvalidArgument, "ValueError: slice step cannot be zero");
      if (obj.is_string()) {
        auto cps = decode_utf8(obj.s);
        std::vector<char32_t> out;
        for (auto k : slice_indices(static_cast<std::int64_t>(cps.size()), parts[0], parts[1], step)) out.push_back(cps[k]);
        return Value::string(encode_utf8(out));
      }
      if (obj.is_seq() && (obj.seq_kind == SeqKind::kList || obj.seq_kind == SeqKind::kTuple ||
                          obj.seq_kind == SeqKind::kRange)) {
        std::vector<Value> out;
        for (auto k : slice_indices(static_cast<std::int64_t>(obj.seq->size()), parts[0], parts[1], step))
          out.push_back((*obj.seq)[k]);
        return Value::sequence(std::move(out), obj.seq_kind);
      }
      // Jinja2 compiles a slice to a plain Python subscript (no getitem fallback): anything else raises,
      // except in a folded constant, where environment.getitem turns the failure into Undefined.
      if (folding_constant_) return Value::undefined("'" + type_name(obj) + " object' is not subscriptable");
      if (obj.is_dict()) return type_error("unhashable type: 'slice'");
      return type_error("'" + type_name(obj) + "' object is not subscriptable");
    }
    case ExprKind::kCall: {
      GB_ASSIGN_OR_RETURN(auto fn, eval(*e.items[0], s));
      GB_ASSIGN_OR_RETURN(auto args, eval_args(e, 1, s));
      return call(fn, args);
    }
    case ExprKind::kFilter: {
      GB_ASSIGN_OR_RETURN(auto subject, eval(*e.items[0], s));
      GB_ASSIGN_OR_RETURN(auto args, eval_args(e, 1, s));
      return filter(e.name, subject, args);
    }
    case ExprKind::kTest: {
      GB_ASSIGN_OR_RETURN(auto subject, eval(*e.items[0], s));
      GB_ASSIGN_OR_RETURN(auto args, eval_args(e, 1, s));
      GB_ASSIGN_OR_RETURN(bool r, test(e.name, subject, args));
      return Value::boolean(r != e.negated);
    }
    case ExprKind::kNot: {
      GB_ASSIGN_OR_RETURN(auto v, eval(*e.items[0], s));
      return Value::boolean(!truthy(v));
    }
    case ExprKind::kNeg:
    case ExprKind::kPos: {
      GB_ASSIGN_OR_RETURN(auto v, eval(*e.items[0], s));
      if (v.is_undefined()) return undefined_error(v);
      bool neg = e.kind == ExprKind::kNeg;
      if (v.kind == Value::Kind::kInt || v.kind == Value::Kind::kBool) {
        std::int64_t x = v.kind == Value::Kind::kBool ? v.b : v.i;
        if (neg && x == INT64_MIN) return make_error(ErrorCode::kUnsupported, "integer beyond 64 bits");
        return Value::integer(neg ? -x : x);
      }
      if (v.kind == Value::Kind::kFloat) return Value::real(neg ? -v.f : v.f);
      return type_error(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" + type_name(v) + "'");
    }
    case ExprKind::kBinary: return eval_binary(e, s);
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      GB_ASSIGN_OR_RETURN(auto a, eval(*e.items[0], s));
      bool t = truthy(a);
      if ((e.kind == ExprKind::kAnd) ? !t : t) return a;
      return eval(*e.items[1], s);
    }
    case ExprKind::kCond: {
      GB_ASSIGN_OR_RETURN(auto c, eval(*e.items[1], s));
      if (truthy(c)) return eval(*e.items[0], s);
      if (e.items[2]) return eval(*e.items[2], s);
      return Value::undefined("the inline if-expression on " + pos_string(e.pos) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return make_error(ErrorCode::kInternal, "unknown expression kind");
}

Result<Value> Interpreter::eval_binary(const Expr& e, const std::shared_ptr<Scope>& s) {
  GB_ASSIGN_OR_RETURN(auto a, eval(*e.items[0], s));
  GB_ASSIGN_OR_RETURN(auto b, eval(*e.items[1], s));
  return binary_op(e.name, a, b);
}

Result<Value> Interpreter::call(const Value& fn, CallArgs& args) {
  if (fn.kind == Value::Kind::kCallable) return fn.fn->call(*this, args);
  if (fn.is_undefined()) return undefined_error(fn);
  return type_error("'" + type_name(fn) + "' object is not callable");
}

Result<Value> Interpreter::getattr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (!name.empty() && name[0] == '_')
    return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
  if (obj.kind == Value::Kind::kNamespace) {
    const Value* v = obj.dict->find(name);
    return v ? *v : Value::undefined("'Namespace object' has no attribute '" + name + "'");
  }
  if (obj.kind == Value::Kind::kString || obj.kind == Value::Kind::kSeq || obj.kind == Value::Kind::kDict) {
    GB_ASSIGN_OR_RETURN(auto m, bound_method(obj, name));
    if (!m.is_undefined() || obj.kind != Value::Kind::kDict) return m;
    const Value* v = obj.dict->find(name);
    if (v) return *v;
  }
  return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
}

Result<Value> Interpreter::getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_error(obj);
  auto missing = [&]() -> Result<Value> {
    if (key.is_string() && obj.kind != Value::Kind::kUndefined) return getattr(obj, key.s);
    return Value::undefined("'" + type_name(obj) + " object' has no item");
  };
  if (obj.kind == Value::Kind::kDict) {
    const Value* v = obj.dict->find(key);
    if (v) return *v;
    return missing();
  }
  if (obj.kind == Value::Kind::kNamespace) return missing();
  if (is_int_like(key) && (obj.is_string() || (obj.is_seq() && obj.seq_kind != SeqKind::kIterator &&
                                                                   obj.seq_kind != SeqKind::kView))) {
    std::int64_t idx = key.kind == Value::Kind::kBool ? key.b : key.i;
    if (obj.is_string()) {
      auto cps = decode_utf8(obj.s);
      auto n = static_cast<std::int64_t>(cps.size());
      if (idx < 0) idx += n;
      if (idx < 0 || idx >= n) return Value::undefined("string index out of range");
      std::string ch;
      append_utf8(ch, cps[static_cast<std::size_t>(idx)]);
      return Value::string(std::move(ch));
    }
    auto n = static_cast<std::int64_t>(obj.seq->size());
    if (idx < 0) idx += n;
    if (idx < 0 || idx >= n) return Value::undefined("'" + type_name(obj) + " object' has no element " + std::to_string(key.i));
    return (*obj.seq)[static_cast<std::size_t>(idx)];
  }
  return missing();
}

Result<Value> Interpreter::filter(const std::string& name, const Value& subject, CallArgs& args) {
  return apply_filter(*this, name, subject, args);
}

Result<bool> Interpreter::test(const std::string& name, const Value& subject, CallArgs& args) {
  return apply_test(*this, name, subject, args);
}

}  // namespace glassbox::chat_template
