// Jinja2's grammar for the statements and expressions chat templates use (see ast.h).
// Anything else is refused by name and position: a template glassbox cannot render exactly
// is an error, never a different prompt.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "chat_template/ast.h"

namespace glassbox::chat_template {

namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Result<Body> run() {
    Body body;
    std::string end;
    GB_RETURN_IF_ERROR(parse_body(&body, {}, &end));
    return body;
  }

 private:
  const Token& cur() const { return t_[k_]; }
  const Token& peek(std::size_t n = 1) const { return t_[std::min(k_ + n, t_.size() - 1)]; }
  void next() { if (k_ + 1 < t_.size()) ++k_; }
  bool is_op(const char* op) const { return cur().type == Tok::kOperator && cur().value == op; }
  bool is_name(const char* n) const { return cur().type == Tok::kName && cur().value == n; }
  bool skip_op(const char* op) { if (!is_op(op)) return false; next(); return true; }
  bool skip_name(const char* n) { if (!is_name(n)) return false; next(); return true; }

  Error fail(const Pos& p, std::string what) const {
    return make_error(ErrorCode::kInvalidArgument, "TemplateSyntaxError: " + std::move(what), pos_string(p),
                      "fix the template (Jinja2 rejects it too)");
  }
  Error unsupported(const Pos& p, std::string what) const {
    return make_error(ErrorCode::kUnsupported, "unsupported construct: " + std::move(what), pos_string(p),
                      "glassbox renders the subset of Jinja2 that chat templates use (docs/generation.md); "
                      "rewrite the template without it or report it");
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::kEof: return "end of template";
      case Tok::kVarEnd: return "'}}'";
      case Tok::kBlockEnd: return "'%}'";
      case Tok::kData: return "template data";
      default: return "'" + t.value + "'";
    }
  }
  Status expect_op(const char* op) {
    if (skip_op(op)) return Status();
    return fail(cur().pos, std::string("expected '") + op + "', got " + describe(cur()));
  }
  Status expect(Tok type, const char* what) {
    if (cur().type == type) { next(); return Status(); }
    return fail(cur().pos, std::string("expected ") + what + ", got " + describe(cur()));
  }

  // Parses nodes until a block tag whose name is in `ends` (left unconsumed, name in *end).
  Status parse_body(Body* body, std::initializer_list<const char*> ends, std::string* end) {
    while (true) {
      const Token& t = cur();
      if (t.type == Tok::kEof) {
        if (ends.size() == 0) return Status();
        return fail(t.pos, "unexpected end of template, expected '" + std::string(*ends.begin()) + "'");
      }
      if (t.type == Tok::kData) {
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::kText;
        n->pos = t.pos;
        n->text = t.value;
        body->push_back(std::move(n));
        next();
      } else if (t.type == Tok::kVarBegin) {
        auto n = std::make_unique<Node>();
        n->kind = NodeKind::kOutput;
        n->pos = t.pos;
        next();
        GB_ASSIGN_OR_RETURN(n->expr, parse_tuple(true, false, {}));
        GB_RETURN_IF_ERROR(expect(Tok::kVarEnd, "'}}'"));
        body->push_back(std::move(n));
      } else if (t.type == Tok::kBlockBegin) {
        const Token& name = peek();
        if (name.type == Tok::kName)
          for (const char* e : ends)
            if (name.value == e) {
              next();
              *end = name.value;
              return Status();
            }
        next();
        GB_RETURN_IF_ERROR(parse_statement(body));
      } else {
        return fail(t.pos, "unexpected " + describe(t));
      }
    }
  }

  Status parse_statement(Body* body) {
    DepthGuard guard(depth_);
    GB_RETURN_IF_ERROR(check_depth());
    const Token& t = cur();
    if (t.type != Tok::kName) return fail(t.pos, "tag name expected");
    auto n = std::make_unique<Node>();
    n->pos = t.pos;
    const std::string name = t.value;
    next();
    if (name == "if") {
      GB_RETURN_IF_ERROR(parse_if(n.get()));
    } else if (name == "for") {
      GB_RETURN_IF_ERROR(parse_for(n.get()));
    } else if (name == "set") {
      GB_RETURN_IF_ERROR(parse_set(n.get()));
    } else if (name == "macro") {
      GB_RETURN_IF_ERROR(parse_macro(n.get()));
    } else if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) return fail(t.pos, "'" + name + "' outside of a loop");
      n->kind = name == "break" ? NodeKind::kBreak : NodeKind::kContinue;
      GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
    } else if (name == "generation") {
      n->kind = NodeKind::kGeneration;
      GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
      GB_RETURN_IF_ERROR(parse_end_body(&n->body, "endgeneration"));
    } else if (name == "filter") {
      n->kind = NodeKind::kFilterBlock;
      GB_ASSIGN_OR_RETURN(n->expr, parse_filter_chain(nullptr));
      GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
      GB_RETURN_IF_ERROR(parse_end_body(&n->body, "endfilter"));
    } else if (name == "call" || name == "include" || name == "import" || name == "from" || name == "extends" ||
               name == "block" || name == "with" || name == "autoescape" || name == "do" || name == "trans") {
      return unsupported(t.pos, "'{% " + name + " %}' tag");
    } else {
      return fail(t.pos, "encountered unknown tag '" + name + "'");
    }
    body->push_back(std::move(n));
    return Status();
  }

  Status parse_end_body(Body* body, const char* end_name) {
    std::string end;
    GB_RETURN_IF_ERROR(parse_body(body, {end_name}, &end));
    next();  // the end tag's name
    return expect(Tok::kBlockEnd, "'%}'");
  }

  Status parse_if(Node* n) {
    n->kind = NodeKind::kIf;
    while (true) {
      GB_ASSIGN_OR_RETURN(auto cond, parse_tuple(false, false, {}));
      GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
      Body body;
      std::string end;
      GB_RETURN_IF_ERROR(parse_body(&body, {"elif", "else", "endif"}, &end));
      n->branches.emplace_back(std::move(cond), std::move(body));
      next();
      if (end == "elif") continue;
      if (end == "else") {
        GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
        GB_RETURN_IF_ERROR(parse_end_body(&n->else_body, "endif"));
        return Status();
      }
      return expect(Tok::kBlockEnd, "'%}'");
    }
  }

  Status parse_for(Node* n) {
    n->kind = NodeKind::kFor;
    bool paren = skip_op("(");
    while (true) {
      if (cur().type != Tok::kName) return fail(cur().pos, "loop variable name expected, got " + describe(cur()));
      n->targets.push_back(cur().value);
      next();
      if (!skip_op(",")) break;
      if (paren && is_op(")")) break;
    }
    if (paren) GB_RETURN_IF_ERROR(expect_op(")"));
    if (!skip_name("in")) return fail(cur().pos, "expected 'in', got " + describe(cur()));
    GB_ASSIGN_OR_RETURN(n->expr, parse_tuple(false, false, {"recursive"}));
    if (skip_name("if")) {
      GB_ASSIGN_OR_RETURN(n->cond, parse_expression(true));
    }
    if (is_name("recursive")) return unsupported(cur().pos, "recursive for loop");
    GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
    ++loop_depth_;
    std::string end;
    Status st = parse_body(&n->body, {"else", "endfor"}, &end);
    --loop_depth_;
    GB_RETURN_IF_ERROR(st);
    next();
    GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
    if (end == "else") GB_RETURN_IF_ERROR(parse_end_body(&n->else_body, "endfor"));
    return Status();
  }

  Status parse_set(Node* n) {
    if (cur().type != Tok::kName) return fail(cur().pos, "variable name expected after 'set'");
    n->text = cur().value;
    next();
    if (skip_op(".")) {
      if (cur().type != Tok::kName) return fail(cur().pos, "attribute name expected");
      n->attr = cur().value;
      next();
    }
    if (is_op(",")) return unsupported(cur().pos, "tuple unpacking in 'set'");
    if (skip_op("=")) {
      n->kind = NodeKind::kSet;
      GB_ASSIGN_OR_RETURN(n->expr, parse_tuple(true, false, {}));
      return expect(Tok::kBlockEnd, "'%}'");
    }
    if (!n->attr.empty()) return fail(cur().pos, "expected '='");
    if (is_op("|")) return unsupported(cur().pos, "filter on a block 'set'");
    n->kind = NodeKind::kSetBlock;
    GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
    return parse_end_body(&n->body, "endset");
  }

  Status parse_macro(Node* n) {
    n->kind = NodeKind::kMacro;
    if (cur().type != Tok::kName) return fail(cur().pos, "macro name expected");
    n->text = cur().value;
    next();
    GB_RETURN_IF_ERROR(expect_op("("));
    while (!is_op(")")) {
      if (!n->params.empty()) GB_RETURN_IF_ERROR(expect_op(","));
      if (is_op(")")) break;
      if (cur().type != Tok::kName) return fail(cur().pos, "parameter name expected");
      std::string p = cur().value;
      next();
      ExprPtr def;
      if (skip_op("=")) {
        GB_ASSIGN_OR_RETURN(def, parse_expression(true));
      } else if (!n->params.empty() && n->params.back().second) {
        return fail(cur().pos, "non-default argument follows default argument");
      }
      n->params.emplace_back(std::move(p), std::move(def));
    }
    next();
    GB_RETURN_IF_ERROR(expect(Tok::kBlockEnd, "'%}'"));
    int saved = loop_depth_;
    loop_depth_ = 0;
    Status st = parse_end_body(&n->body, "endmacro");
    loop_depth_ = saved;
    return st;
  }

  ExprPtr make(ExprKind kind, const Pos& p) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = p;
    return e;
  }

  bool tuple_end(std::initializer_list<const char*> extra) const {
    if (cur().type == Tok::kVarEnd || cur().type == Tok::kBlockEnd || is_op(")")) return true;
    for (const char* e : extra)
      if (is_name(e)) return true;
    return false;
  }

  // Comma-separated expressions: one expression, or a tuple when a comma appears.
  Result<ExprPtr> parse_tuple(bool with_condexpr, bool explicit_only, std::initializer_list<const char*> extra) {
    Pos p = cur().pos;
    std::vector<ExprPtr> items;
    bool comma = false;
    while (true) {
      if (!items.empty()) {
        if (!skip_op(",")) break;
        comma = true;
      }
      if (tuple_end(extra)) break;
      GB_ASSIGN_OR_RETURN(auto e, parse_expression(with_condexpr));
      items.push_back(std::move(e));
    }
    if (!comma && items.size() == 1) return std::move(items[0]);
    if (!comma && items.empty() && !explicit_only) return fail(cur().pos, "expected an expression, got " + describe(cur()));
    auto t = make(ExprKind::kTuple, p);
    t->items = std::move(items);
    return t;
  }

  // Nesting bound: deeper expressions or blocks than any chat template has are refused, not a stack overflow.
  static constexpr int kMaxDepth = 200;
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  };
  Status check_depth() const {
    if (depth_ <= kMaxDepth) return Status();
    return make_error(ErrorCode::kLimitExceeded, "template nested deeper than " + std::to_string(kMaxDepth) + " levels",
                      pos_string(cur().pos), "simplify the template");
  }

  Result<ExprPtr> parse_expression(bool with_condexpr) {
    DepthGuard guard(depth_);
    GB_RETURN_IF_ERROR(check_depth());
    if (!with_condexpr) return parse_or();
    GB_ASSIGN_OR_RETURN(auto e, parse_or());
    while (is_name("if")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto cond, parse_or());
      ExprPtr other;
      if (skip_name("else")) {
        GB_ASSIGN_OR_RETURN(other, parse_expression(true));
      }
      auto c = make(ExprKind::kCond, p);
      c->items.push_back(std::move(e));
      c->items.push_back(std::move(cond));
      c->items.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }

  // Sets e's height from its children; a chain longer than kMaxDepth (a+a+a..., x.a.a...) is refused.
  Result<ExprPtr> grown(ExprPtr e) {
    for (const auto& c : e->items)
      if (c) e->height = std::max(e->height, c->height + 1);
    if (e->height > kMaxDepth)
      return make_error(ErrorCode::kLimitExceeded, "expression nested deeper than " + std::to_string(kMaxDepth) +
                                                       " levels", pos_string(e->pos), "simplify the template");
    return e;
  }

  Result<ExprPtr> binary(ExprKind kind, const std::string& op, ExprPtr a, ExprPtr b, const Pos& p) {
    auto e = make(kind, p);
    e->name = op;
    e->items.push_back(std::move(a));
    e->items.push_back(std::move(b));
    return grown(std::move(e));
  }

  Result<ExprPtr> parse_or() {
    GB_ASSIGN_OR_RETURN(auto e, parse_and());
    while (is_name("or")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_and());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kOr, "or", std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_and() {
    GB_ASSIGN_OR_RETURN(auto e, parse_not());
    while (is_name("and")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_not());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kAnd, "and", std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_not() {
    DepthGuard guard(depth_);
    GB_RETURN_IF_ERROR(check_depth());
    if (is_name("not")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto inner, parse_not());
      auto e = make(ExprKind::kNot, p);
      e->items.push_back(std::move(inner));
      return e;
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    GB_ASSIGN_OR_RETURN(auto e, parse_math1());
    int count = 0;
    while (true) {
      Pos p = cur().pos;
      std::string op;
      if (cur().type == Tok::kOperator &&
          (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == "<=" ||
           cur().value == ">" || cur().value == ">=")) {
        op = cur().value;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && peek().type == Tok::kName && peek().value == "in") {
        op = "notin";
        next();
        next();
      } else {
        break;
      }
      if (++count > 1) return unsupported(p, "chained comparison");
      GB_ASSIGN_OR_RETURN(auto r, parse_math1());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kBinary, op, std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_math1() {
    GB_ASSIGN_OR_RETURN(auto e, parse_concat());
    while (is_op("+") || is_op("-")) {
      Pos p = cur().pos;
      std::string op = cur().value;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_concat());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kBinary, op, std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_concat() {
    GB_ASSIGN_OR_RETURN(auto e, parse_math2());
    while (is_op("~")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_math2());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kBinary, "~", std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_math2() {
    GB_ASSIGN_OR_RETURN(auto e, parse_pow());
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      Pos p = cur().pos;
      std::string op = cur().value;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_pow());
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kBinary, op, std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_pow() {
    GB_ASSIGN_OR_RETURN(auto e, parse_unary(true));
    while (is_op("**")) {
      Pos p = cur().pos;
      next();
      GB_ASSIGN_OR_RETURN(auto r, parse_unary(true));
      GB_ASSIGN_OR_RETURN(e, binary(ExprKind::kBinary, "**", std::move(e), std::move(r), p));
    }
    return e;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    DepthGuard guard(depth_);
    GB_RETURN_IF_ERROR(check_depth());
    Pos p = cur().pos;
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      bool neg = is_op("-");
      next();
      GB_ASSIGN_OR_RETURN(auto inner, parse_unary(false));
      e = make(neg ? ExprKind::kNeg : ExprKind::kPos, p);
      e->items.push_back(std::move(inner));
    } else {
      GB_ASSIGN_OR_RETURN(e, parse_primary());
    }
    GB_ASSIGN_OR_RETURN(e, parse_postfix(std::move(e)));
    if (with_filter) return parse_filter_expr(std::move(e));
    return e;
  }

  Result<ExprPtr> parse_primary() {
    const Token& t = cur();
    if (t.type == Tok::kName) {
      auto e = make(ExprKind::kLiteral, t.pos);
      const std::string& v = t.value;
      if (v == "true" || v == "True") e->literal = Value::boolean(true);
      else if (v == "false" || v == "False") e->literal = Value::boolean(false);
      else if (v == "none" || v == "None") e->literal = Value::none();
      else { e->kind = ExprKind::kName; e->name = v; }
      next();
      return e;
    }
    if (t.type == Tok::kString) {
      auto e = make(ExprKind::kLiteral, t.pos);
      std::string s;
      while (cur().type == Tok::kString) { s += cur().value; next(); }
      e->literal = Value::string(std::move(s));
      return e;
    }
    if (t.type == Tok::kInteger || t.type == Tok::kFloat) {
      auto e = make(ExprKind::kLiteral, t.pos);
      if (t.type == Tok::kFloat) {
        e->literal = Value::real(std::strtod(t.value.c_str(), nullptr));
      } else {
        errno = 0;
        long long v = std::strtoll(t.value.c_str(), nullptr, 10);
        if (errno == ERANGE) return unsupported(t.pos, "integer literal beyond 64 bits");
        e->literal = Value::integer(v);
      }
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      GB_ASSIGN_OR_RETURN(auto e, parse_tuple(true, true, {}));
      GB_RETURN_IF_ERROR(expect_op(")"));
      return e;
    }
    if (is_op("[") || is_op("{")) {
      bool dict = is_op("{");
      auto e = make(dict ? ExprKind::kDict : ExprKind::kList, t.pos);
      next();
      const char* close = dict ? "}" : "]";
      while (!is_op(close)) {
        if (!e->items.empty()) {
          GB_RETURN_IF_ERROR(expect_op(","));
          if (is_op(close)) break;
        }
        GB_ASSIGN_OR_RETURN(auto item, parse_expression(true));
        e->items.push_back(std::move(item));
        if (dict) {
          GB_RETURN_IF_ERROR(expect_op(":"));
          GB_ASSIGN_OR_RETURN(auto val, parse_expression(true));
          e->items.push_back(std::move(val));
        }
      }
      next();
      return e;
    }
    return fail(t.pos, "unexpected " + describe(t));
  }

  Result<ExprPtr> parse_postfix(ExprPtr e) {
    while (true) {
      Pos p = cur().pos;
      if (skip_op(".")) {
        if (cur().type == Tok::kName) {
          auto g = make(ExprKind::kGetAttr, p);
          g->name = cur().value;
          g->items.push_back(std::move(e));
          e = std::move(g);
        } else if (cur().type == Tok::kInteger) {
          auto g = make(ExprKind::kGetItem, p);
          g->items.push_back(std::move(e));
          auto idx = make(ExprKind::kLiteral, cur().pos);
          idx->literal = Value::integer(std::strtoll(cur().value.c_str(), nullptr, 10));
          g->items.push_back(std::move(idx));
          e = std::move(g);
        } else {
          return fail(cur().pos, "expected name or number after '.'");
        }
        next();
      } else if (is_op("[")) {
        next();
        GB_ASSIGN_OR_RETURN(e, parse_subscript(std::move(e), p));
        GB_RETURN_IF_ERROR(expect_op("]"));
      } else if (is_op("(")) {
        GB_ASSIGN_OR_RETURN(e, parse_call(std::move(e)));
      } else {
        return e;
      }
      GB_ASSIGN_OR_RETURN(e, grown(std::move(e)));
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr obj, const Pos& p) {
    ExprPtr parts[3];
    if (!is_op(":")) {
      GB_ASSIGN_OR_RETURN(parts[0], parse_expression(true));
      if (is_op(",")) return unsupported(cur().pos, "tuple subscript");
      if (!is_op(":")) {
        auto g = make(ExprKind::kGetItem, p);
        g->items.push_back(std::move(obj));
        g->items.push_back(std::move(parts[0]));
        return g;
      }
    }
    next();  // ':'
    if (!is_op(":") && !is_op("]")) {
      GB_ASSIGN_OR_RETURN(parts[1], parse_expression(true));
    }
    if (skip_op(":") && !is_op("]")) {
      GB_ASSIGN_OR_RETURN(parts[2], parse_expression(true));
    }
    auto s = make(ExprKind::kSlice, p);
    s->items.push_back(std::move(obj));
    for (auto& part : parts) s->items.push_back(std::move(part));
    return s;
  }

  Status parse_call_args(Expr* call) {
    GB_RETURN_IF_ERROR(expect_op("("));
    bool first = true;
    while (!is_op(")")) {
      if (!first) {
        GB_RETURN_IF_ERROR(expect_op(","));
        if (is_op(")")) break;
      }
      first = false;
      if (is_op("*") || is_op("**")) return unsupported(cur().pos, "*args / **kwargs in a call");
      if (cur().type == Tok::kName && peek().type == Tok::kOperator && peek().value == "=") {
        std::string key = cur().value;
        next();
        next();
        GB_ASSIGN_OR_RETURN(auto v, parse_expression(true));
        call->kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!call->kwargs.empty()) return fail(cur().pos, "positional argument follows keyword argument");
        GB_ASSIGN_OR_RETURN(auto v, parse_expression(true));
        call->items.push_back(std::move(v));
      }
    }
    next();
    return Status();
  }

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto c = make(ExprKind::kCall, cur().pos);
    c->items.push_back(std::move(callee));
    GB_RETURN_IF_ERROR(parse_call_args(c.get()));
    return c;
  }

  Result<ExprPtr> parse_filter_chain(ExprPtr subject) {
    bool first = true;
    while (first || is_op("|")) {
      if (!first || is_op("|")) next();
      first = false;
      if (cur().type != Tok::kName) return fail(cur().pos, "filter name expected, got " + describe(cur()));
      auto f = make(ExprKind::kFilter, cur().pos);
      f->name = cur().value;
      next();
      while (is_op(".")) {  // dotted filter names
        next();
        if (cur().type != Tok::kName) return fail(cur().pos, "filter name expected");
        f->name += "." + cur().value;
        next();
      }
      f->items.push_back(std::move(subject));
      if (is_op("(")) GB_RETURN_IF_ERROR(parse_call_args(f.get()));
      GB_ASSIGN_OR_RETURN(subject, grown(std::move(f)));
    }
    return subject;
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        GB_ASSIGN_OR_RETURN(e, parse_filter_chain(std::move(e)));
      } else if (is_name("is")) {
        GB_ASSIGN_OR_RETURN(e, parse_test(std::move(e)));
        GB_ASSIGN_OR_RETURN(e, grown(std::move(e)));
      } else if (is_op("(")) {
        GB_ASSIGN_OR_RETURN(e, parse_call(std::move(e)));
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> parse_test(ExprPtr subject) {
    next();  // 'is'
    bool negated = skip_name("not");
    if (cur().type != Tok::kName) return fail(cur().pos, "test name expected, got " + describe(cur()));
    auto t = make(ExprKind::kTest, cur().pos);
    t->name = cur().value;
    t->negated = negated;
    next();
    t->items.push_back(std::move(subject));
    if (is_op("(")) {
      GB_RETURN_IF_ERROR(parse_call_args(t.get()));
    } else if ((cur().type == Tok::kName || cur().type == Tok::kString || cur().type == Tok::kInteger ||
                cur().type == Tok::kFloat || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) return fail(cur().pos, "you cannot chain multiple tests with is");
      GB_ASSIGN_OR_RETURN(auto arg, parse_primary());
      GB_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
      t->items.push_back(std::move(arg));
    }
    return t;
  }

  const std::vector<Token>& t_;
  std::size_t k_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<Body> parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace glassbox::chat_template
