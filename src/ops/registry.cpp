#include "ops/registry.h"

#include "ops/op.h"

#include <algorithm>
#include <span>
#include <string_view>

#include "graph/passes/pattern.h"

namespace glassbox::ops {

#define OP(name, first, last) Result<std::unique_ptr<Op>> create_##name(const graph::Node& node, int64_t opset);
#include "ops/ops.inc"
#undef OP
#define ML_OP(name, first, last) Result<std::unique_ptr<Op>> create_ml_##name(const graph::Node& node, int64_t opset);
#define ML_REFUSED(name, why)
#include "ops/ml_ops.inc"
#undef ML_OP
#undef ML_REFUSED
#define CONTRIB_OP(name, first, last) Result<std::unique_ptr<Op>> create_ms_##name(const graph::Node& node, int64_t opset);
#include "ops/contrib_ops.inc"
#undef CONTRIB_OP
#define ORT_ONNX_OP(name, why) Result<std::unique_ptr<Op>> create_ort_##name(const graph::Node& node, int64_t opset);
#include "graph/ort_onnx_domain_ops.inc"
#undef ORT_ONNX_OP

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

constexpr FactoryEntry kMlFactories[] = {
#define ML_OP(name, first, last) {#name, first, last, &create_ml_##name},
#define ML_REFUSED(name, why)
#include "ops/ml_ops.inc"
#undef ML_OP
#undef ML_REFUSED
    {nullptr, 0, 0, nullptr},
};

constexpr OpSupport kMlOps[] = {
#define ML_OP(name, first, last) {#name, first, last},
#define ML_REFUSED(name, why)
#include "ops/ml_ops.inc"
#undef ML_OP
#undef ML_REFUSED
    {nullptr, 0, 0},
};

constexpr FactoryEntry kContribFactories[] = {
#define CONTRIB_OP(name, first, last) {#name, first, last, &create_ms_##name},
#include "ops/contrib_ops.inc"
#undef CONTRIB_OP
    {nullptr, 0, 0, nullptr},
};

constexpr OpSupport kContribOps[] = {
#define CONTRIB_OP(name, first, last) {#name, first, last},
#include "ops/contrib_ops.inc"
#undef CONTRIB_OP
    {nullptr, 0, 0},
};

// ONNX Runtime's ops in the ai.onnx domain (graph/ort_onnx_domain_ops.inc): any ai.onnx opset the
// other ops of the model are supported at.
struct OrtOnnxEntry {
  const char* op_type;
  OpFactory create;
};

constexpr OrtOnnxEntry kOrtOnnxFactories[] = {
#define ORT_ONNX_OP(name, why) {#name, &create_ort_##name},
#include "graph/ort_onnx_domain_ops.inc"
#undef ORT_ONNX_OP
};

const OrtOnnxEntry* ort_onnx_factory(const std::string& op_type) {
  for (const auto& f : kOrtOnnxFactories)
    if (op_type == f.op_type) return &f;
  return nullptr;
}

constexpr RefusedOp kMlRefused[] = {
#define ML_OP(name, first, last)
#define ML_REFUSED(name, why) {#name, why},
#include "ops/ml_ops.inc"
#undef ML_OP
#undef ML_REFUSED
    {nullptr, nullptr},
};

}  // namespace

const StringOp kStringOps[] = {
#define STRING_OP(domain, name, what) {domain, #name, what},
#include "ops/string_ops.inc"
#undef STRING_OP
};

std::span<const StringOp> string_ops() { return kStringOps; }

bool takes_strings(const std::string& domain, const std::string& op_type) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const auto& s : kStringOps)
    if (d == s.domain && op_type == s.op_type) return true;
  return false;
}

const OrtOnnxOp kOrtOnnxOps[] = {
#define ORT_ONNX_OP(name, why) {#name, why},
#include "graph/ort_onnx_domain_ops.inc"
#undef ORT_ONNX_OP
};

std::span<const OrtOnnxOp> ort_onnx_domain_ops() { return kOrtOnnxOps; }

std::span<const OpSupport> supported_ml_ops() { return {kMlOps, std::size(kMlOps) - 1}; }
std::span<const OpSupport> supported_contrib_ops() { return {kContribOps, std::size(kContribOps) - 1}; }
std::span<const RefusedOp> refused_ml_ops() { return {kMlRefused, std::size(kMlRefused) - 1}; }

std::span<const OpSupport> supported_ops() { return {kOps, std::size(kOps) - 1}; }

int64_t newest_supported_opset() {
  int64_t v = 0;
  for (const auto& op : supported_ops()) v = std::max(v, op.last_opset);
  return v;
}

bool is_supported(const std::string& domain, const std::string& op_type, int64_t opset) {
  const bool ml = domain == kMlDomain, contrib = domain == kContribDomain;
  if (!(domain.empty() || domain == "ai.onnx" || ml || contrib)) return false;
  if (!ml && !contrib && ort_onnx_factory(op_type)) return opset >= 1 && opset <= newest_supported_opset();
  for (const auto& op : ml ? supported_ml_ops() : contrib ? supported_contrib_ops() : supported_ops())
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
  std::string where = "node '" + node.name + "' (" + node.op_type + ", opset " + std::to_string(opset) + ")";
  if (node.domain == kInternalOpDomain) {
    for (const auto& f : kInternal)
      if (node.op_type == f.op_type) {
        auto op = f.create(node);
        if (!op.ok()) return std::move(op).take_error().with_where(where);
        return op;
      }
    return make_error(ErrorCode::kUnsupported, "internal op '" + node.op_type + "' does not exist", where);
  }
  const bool ml = node.domain == kMlDomain, contrib = node.domain == kContribDomain;
  if (!(node.domain.empty() || node.domain == "ai.onnx" || ml || contrib))
    return make_error(ErrorCode::kUnsupported, "operator domain '" + node.domain + "' is not supported", where,
                      "glassbox runs ai.onnx and ai.onnx.ml operators and the com.microsoft ones in docs/OPERATORS.md; "
                      "re-export without custom ops");
  if (contrib) {
    opset = node.domain_opset;
    where = "node '" + node.name + "' (" + std::string(kContribDomain) + "::" + node.op_type + ", opset " +
            std::to_string(opset) + ")";
  }
  if (ml) {
    // The runtime passes the ai.onnx opset; an ml node carries its own domain's (loader).
    opset = node.domain_opset;
    where = "node '" + node.name + "' (" + std::string(kMlDomain) + "::" + node.op_type + ", opset " +
            std::to_string(opset) + ")";
    for (const auto& r : refused_ml_ops())
      if (node.op_type == r.op_type) return make_error(ErrorCode::kUnsupported, std::string("operator refused: ") + r.why, where);
  }
  if (!ml && !contrib)
    if (const OrtOnnxEntry* f = ort_onnx_factory(node.op_type); f && opset >= 1 && opset <= newest_supported_opset()) {
      auto op = f->create(node, opset);
      if (!op.ok()) return std::move(op).take_error().with_where(where);
      return op;
    }
  bool known_other_opset = false;
  const auto factories = ml ? std::span<const FactoryEntry>(kMlFactories)
                            : contrib ? std::span<const FactoryEntry>(kContribFactories) : std::span<const FactoryEntry>(kFactories);
  for (const auto& f : factories) {
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
