// The parsed form of a chat template: expressions and statements, each with its position.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/lexer.h"
#include "chat_template/value.h"

namespace glassbox::chat_template {

enum class ExprKind {
  kLiteral,   // literal
  kName,      // name
  kList,      // items
  kTuple,     // items
  kDict,      // items: key0, value0, key1, value1, ...
  kGetAttr,   // items[0].name
  kGetItem,   // items[0][items[1]]
  kSlice,     // items[0][items[1]:items[2]:items[3]] (null = omitted)
  kCall,      // items[0](items[1..], kwargs)
  kFilter,    // items[0] | name(items[1..], kwargs); items[0] null inside {% filter %}
  kTest,      // items[0] is [not] name(items[1..], kwargs)
  kNot,       // not items[0]
  kNeg,       // -items[0]
  kPos,       // +items[0]
  kBinary,    // items[0] name items[1]: + - * / // % ** ~ == != < <= > >= in notin
  kAnd,       // items[0] and items[1]
  kOr,        // items[0] or items[1]
  kCond,      // items[0] if items[1] else items[2] (items[2] null: Undefined)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  Pos pos;
  Value literal;
  std::string name;
  bool negated = false;  // kTest: "is not"
  int height = 1;        // of this subtree: bounded at parse time, so evaluation cannot overflow the stack
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

enum class NodeKind {
  kText,        // text
  kOutput,      // {{ expr }}
  kIf,          // branches (cond, body); else_body
  kFor,         // targets in expr [if cond]; body; else_body
  kSet,         // target (name, or name.attr when attr non-empty) = expr
  kSetBlock,    // {% set target %}body{% endset %}
  kMacro,       // name(params) body
  kBreak,
  kContinue,
  kGeneration,  // {% generation %}body{% endgeneration %} (Hugging Face's AssistantTracker: renders body)
  kFilterBlock, // {% filter f %}body{% endfilter %}: expr is the filter chain with a null subject
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  NodeKind kind = NodeKind::kText;
  Pos pos;
  std::string text;                       // kText; kSet/kSetBlock/kMacro: the name
  std::string attr;                       // kSet: namespace attribute
  ExprPtr expr;                           // kOutput, kFor (iterable), kSet (value), kFilterBlock
  ExprPtr cond;                           // kFor: inline filter
  std::vector<std::string> targets;       // kFor
  std::vector<std::pair<ExprPtr, Body>> branches;  // kIf
  Body body;                              // kFor, kSetBlock, kMacro, kGeneration, kFilterBlock
  Body else_body;                         // kIf, kFor
  std::vector<std::pair<std::string, ExprPtr>> params;  // kMacro: name, default (null = required)
};

// Parses a token stream into the template body. Unsupported constructs are errors naming
// the construct and its position.
Result<Body> parse(const std::vector<Token>& tokens);

}  // namespace glassbox::chat_template
