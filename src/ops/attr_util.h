// Typed attribute getters for op factories: each returns the spec default when
// the attribute is absent and a clear kInvalidModel error when it has the wrong
// type. Also: axis normalization and reading small int64 "attribute-like"
// inputs (axes, k, split) from tensors.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/tensor.h"
#include "graph/graph.h"

namespace glassbox::ops {

inline Error attr_type_error(const graph::Attribute& a, graph::AttrType want) {
  return make_error(ErrorCode::kInvalidModel,
                    "attribute '" + a.name + "' has type " + attr_type_name(a.type) + ", expected " +
                        attr_type_name(want),
                    {}, "re-export the model; the ONNX checker should reject this");
}

inline Result<int64_t> attr_int(const graph::Node& node, const std::string& name, int64_t default_value) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return default_value;
  if (a->type != graph::AttrType::kInt) return attr_type_error(*a, graph::AttrType::kInt);
  return a->i;
}

inline Result<float> attr_float(const graph::Node& node, const std::string& name, float default_value) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return default_value;
  if (a->type != graph::AttrType::kFloat) return attr_type_error(*a, graph::AttrType::kFloat);
  return a->f;
}

inline Result<std::string> attr_string(const graph::Node& node, const std::string& name, std::string default_value) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return default_value;
  if (a->type != graph::AttrType::kString) return attr_type_error(*a, graph::AttrType::kString);
  return a->s;
}

// std::nullopt when absent (distinguishes "absent" from "empty list").
inline Result<std::optional<std::vector<int64_t>>> attr_ints(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return std::optional<std::vector<int64_t>>{};
  if (a->type != graph::AttrType::kInts) return attr_type_error(*a, graph::AttrType::kInts);
  return std::optional<std::vector<int64_t>>{a->ints};
}

inline Result<std::optional<std::vector<float>>> attr_floats(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return std::optional<std::vector<float>>{};
  if (a->type != graph::AttrType::kFloats) return attr_type_error(*a, graph::AttrType::kFloats);
  return std::optional<std::vector<float>>{a->floats};
}

inline Result<int64_t> attr_int_required(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.attr(name);
  if (!a)
    return make_error(ErrorCode::kInvalidModel, "required attribute '" + name + "' is missing", {},
                      "re-export the model; the ONNX checker should reject this");
  if (a->type != graph::AttrType::kInt) return attr_type_error(*a, graph::AttrType::kInt);
  return a->i;
}

// Refuses attributes the op does not know (so nothing is silently ignored).
inline Status check_known_attrs(const graph::Node& node, std::initializer_list<const char*> known) {
  for (const auto& [name, a] : node.attributes) {
    bool ok = false;
    for (const char* k : known) ok = ok || name == k;
    if (!ok)
      return make_error(ErrorCode::kUnsupported, "attribute '" + name + "' is not implemented for this op", {},
                        "remove the attribute or re-export the model at a supported opset");
  }
  return {};
}

inline Error unsupported_attr(const std::string& name, const std::string& why) {
  return make_error(ErrorCode::kUnsupported, "attribute '" + name + "': " + why, {},
                    "see docs/OPERATORS.md for what this op supports");
}

// Maps axis in [-rank, rank) to [0, rank).
inline Result<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return make_error(ErrorCode::kInvalidModel,
                      "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Reads an int32/int64 tensor (an "axes"/"k"/"split" input) as int64 values.
inline Result<std::vector<int64_t>> tensor_to_int64s(const Tensor& t, const std::string& what) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data<int32_t>()[i];
  } else {
    return make_error(ErrorCode::kInvalidModel,
                      what + " must be int64 (or int32), got " + dtype_name(t.dtype()));
  }
  return v;
}

}  // namespace glassbox::ops
