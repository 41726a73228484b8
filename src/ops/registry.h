// What the op registry (ops.inc) supports; used by the engine's factory,
// `glassbox inspect` and the generated docs/OPERATORS.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace glassbox::ops {

struct OpSupport {
  const char* op_type;
  int64_t first_opset;
  int64_t last_opset;
};

// Every entry of ops.inc, in file order.
std::span<const OpSupport> supported_ops();

// The ai.onnx.ml operators (ml_ops.inc), in file order; opsets are ai.onnx.ml versions.
inline constexpr const char* kMlDomain = "ai.onnx.ml";
std::span<const OpSupport> supported_ml_ops();

// The com.microsoft operators (contrib_ops.inc), in file order; opsets are com.microsoft versions.
inline constexpr const char* kContribDomain = "com.microsoft";
std::span<const OpSupport> supported_contrib_ops();

// ai.onnx.ml operators glassbox knows and refuses at load, with the reason (ml_ops.inc).
struct RefusedOp {
  const char* op_type;
  const char* why;
};
std::span<const RefusedOp> refused_ml_ops();

// ONNX Runtime's operators in the default (ai.onnx) domain that ONNX itself does not define, with why
// models have them (graph/ort_onnx_domain_ops.inc, the loader's declared checker exemption).
struct OrtOnnxOp {
  const char* op_type;
  const char* why;
};
std::span<const OrtOnnxOp> ort_onnx_domain_ops();

// Operators that take string tensors as inputs (string_ops.inc); every other op is refused
// when an input is a string tensor. domain "" = ai.onnx.
struct StringOp {
  const char* domain;
  const char* op_type;
  const char* what;
};
std::span<const StringOp> string_ops();
// True if (domain, op_type) is in string_ops() ("ai.onnx" counts as "").
bool takes_strings(const std::string& domain, const std::string& op_type);

// Newest ai.onnx opset any registry entry covers (0 when the registry is empty).
int64_t newest_supported_opset();

// True if (domain, op_type) is in the registry (ai.onnx, ai.onnx.ml or com.microsoft) for the model's opset of that domain.
bool is_supported(const std::string& domain, const std::string& op_type, int64_t opset);

}  // namespace glassbox::ops
