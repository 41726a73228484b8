// Small (and deliberately broken) ONNX models for the loader and inspect tests, over the one test model
// builder (tests/common/onnx_builder.h). Here a node keeps exactly the name it is given ("": unnamed, as
// the loader tests need).
#pragma once

#include "../common/onnx_builder.h"

namespace glassbox::testing {

using onnx_builder::add_float_initializer;
using onnx_builder::add_value;
using onnx_builder::make_model;
using onnx_builder::TempDir;
using onnx_builder::write_bytes;
using onnx_builder::write_model;

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  return onnx_builder::add_node_named(g, op, inputs, outputs, name);
}

// y = x + w, x: float[4], w: initializer float[4].
inline onnx::ModelProto make_add_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_float_initializer(g, "w", {4}, {1, 2, 3, 4});
  add_node(g, "Add", {"x", "w"}, {"y"}, "add");
  return m;
}

}  // namespace glassbox::testing
