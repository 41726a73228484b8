// Helpers for the runtime tests over the one test model builder (tests/common/onnx_builder.h; unnamed
// nodes get "<op>_<n>" here), tensors from values, and REQUIRE_OPS (a missing op fails the test).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../common/onnx_builder.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glassbox/tensor.h"
#include "ops/registry.h"

namespace glassbox::rt_test {

using onnx_builder::add_initializer;
using onnx_builder::add_int_attr;
using onnx_builder::add_ints_attr;
using onnx_builder::add_value;
using onnx_builder::make_model;
using onnx_builder::TempDir;
using onnx_builder::write_model;

// A node named as given, or "<op>_<n>" (n: its position) when no name is given.
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  return onnx_builder::add_node_named(g, op, inputs, outputs, name.empty() ? op + "_" + std::to_string(g->node_size() + 1) : name);
}

template <class T>
inline Tensor make_tensor(DataType dt, const Shape& shape, const std::vector<T>& values) {
  auto t = Tensor::allocate(dt, shape);
  EXPECT_TRUE(t.ok());
  if (!values.empty()) std::memcpy(t->mutable_raw(), values.data(), values.size() * sizeof(T));
  return std::move(t).value();
}

inline Tensor float_tensor(const Shape& shape, const std::vector<float>& v) { return make_tensor(DataType::kFloat32, shape, v); }

template <class T>
inline std::vector<T> values_of(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

inline std::string missing_ops(std::initializer_list<const char*> ops, int64_t opset = 17) {
  std::string missing;
  for (const char* op : ops)
    if (!glassbox::ops::is_supported("", op, opset)) missing += std::string(missing.empty() ? "" : ", ") + op;
  return missing;
}

}  // namespace glassbox::rt_test

// Fails the test, naming them, when an op it needs is not registered (a missing op is a defect, never a skip).
#define REQUIRE_OPS(...)                                                         \
  do {                                                                           \
    const std::string gb_missing_ = ::glassbox::rt_test::missing_ops({__VA_ARGS__}); \
    if (!gb_missing_.empty()) GTEST_FAIL() << "ops not registered: " << gb_missing_; \
  } while (0)
