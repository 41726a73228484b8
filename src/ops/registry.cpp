#include "ops/registry.h"

#include "ops/op.h"

#include <algorithm>
#include <string_view>

#include "graph/passes/pattern.h"

namespace glassbox::ops {

#define OP(name, first, last) Result<std::unique_ptr<Op>> create_##name(const graph::Node& node, int64_t opset);
#include "ops/ops.inc"
#undef OP

namespace {

struct FactoryEntry {
  const char* op_type;
  int64_t first_opset;
  int64_t last_opset;
  OpFactory create;
};

constexpr FactoryEntry kFactories[] = {
#define OP(name, first, last) {#name, first, last, &create_##name},
#include "ops/ops.inc"
#undef OP
    {nullptr, 0, 0, nullptr},
};

constexpr OpSupport kOps[] = {
#define OP(name, first, last) {#name, first, last},
#include "ops/ops.inc"
#undef OP
    {nullptr, 0, 0},  // sentinel keeps the array non-empty while the list is empty
};

}  // namespace

std::span<const OpSupport> supported_ops() { return {kOps, std::size(kOps) - 1}; }

int64_t newest_supported_opset() {
  int64_t v = 0;
  for (const auto& op : supported_ops()) v = std::max(v, op.last_opset);
  return v;
}

bool is_supported(const std::string& domain, const std::string& op_type, int64_t opset) {
  if (!(domain.empty() || domain == "ai.onnx")) return false;
  for (const auto& op : supported_ops())
    if (op_type == op.op_type && opset >= op.first_opset && opset <= op.last_opset) return true;
  return false;
}

}  // namespace glassbox::ops

namespace glassbox::ops {

#define INTERNAL_OP(name) Result<std::unique_ptr<Op>> create_internal_##name(const graph::Node& node);
#include "ops/internal_ops.inc"
#undef INTERNAL_OP

namespace {

// Domain of the runtime's internal ops (ops/internal_ops.inc), produced by fusion passes.
constexpr const char* kInternalOpDomain = "glassbox";
static_assert(std::string_view(kInternalOpDomain) == std::string_view(graph::passes::kInternalDomain),
              "the passes and the op registry must agree on the internal domain");

struct InternalEntry {
  const char* op_type;
  Result<std::unique_ptr<Op>> (*create)(const graph::Node&);
};

constexpr InternalEntry kInternal[] = {
#define INTERNAL_OP(name) {#name, &create_internal_##name},
#include "ops/internal_ops.inc"
#undef INTERNAL_OP
};

}  // namespace

Result<std::unique_ptr<Op>> create_op(const graph::Node& node, int64_t opset) {
  const std::string where = "node '" + node.name + "' (" + node.op_type + ", opset " + std::to_string(opset) + ")";
  if (node.domain == kInternalOpDomain) {
    for (const auto& f : kInternal)
      if (node.op_type == f.op_type) {
        auto op = f.create(node);
        if (!op.ok()) return std::move(op).take_error().with_where(where);
        return op;
      }
    return make_error(ErrorCode::kUnsupported, "internal op '" + node.op_type + "' does not exist", where);
  }
  if (!(node.domain.empty() || node.domain == "ai.onnx"))
    return make_error(ErrorCode::kUnsupported, "operator domain '" + node.domain + "' is not supported", where,
                      "glassbox runs ai.onnx operators only; re-export without custom/contrib ops");
  bool known_other_opset = false;
  for (const auto& f : kFactories) {
    if (!f.op_type || node.op_type != f.op_type) continue;
    if (opset >= f.first_opset && opset <= f.last_opset) {
      auto op = f.create(node, opset);
      if (!op.ok()) return std::move(op).take_error().with_where(where);
      return op;
    }
    known_other_opset = true;
  }
  if (known_other_opset)
    return make_error(ErrorCode::kUnsupported, "operator is supported, but not at this opset", where,
                      "see docs/OPERATORS.md for the supported opset range");
  return make_error(ErrorCode::kUnsupported, "operator is not implemented", where,
                    "see docs/OPERATORS.md for the supported operators");
}

}  // namespace glassbox::ops
