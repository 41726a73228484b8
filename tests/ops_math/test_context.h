// Helpers for the math op tests: a node builder, tensors from values, and run_op over the op tests'
// one ComputeContext (tests/ops_nn/test_context.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "graph/graph.h"
#include "ops/op.h"
#include "../ops_nn/test_context.h"

namespace glassbox::ops::testing {

// The op tests' one ComputeContext (tests/ops_nn/test_context.h), here with its inputs by pointer.
using TestContext = testing_nn::TestContext;

// Node builder: make_node("Add", 2, 1).attr_i("fmod", 1) ...
struct NodeBuilder {
  graph::Node node;
  NodeBuilder(const std::string& op_type, int num_inputs, int num_outputs = 1) {
    node.op_type = op_type;
    node.name = op_type + "_test";
    for (int i = 0; i < num_inputs; ++i) node.inputs.push_back("in" + std::to_string(i));
    for (int i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  }
  NodeBuilder& i(const std::string& name, int64_t v) {
    auto& a = node.attributes[name];
    a.name = name; a.type = graph::AttrType::kInt; a.i = v;
    return *this;
  }
  NodeBuilder& f(const std::string& name, float v) {
    auto& a = node.attributes[name];
    a.name = name; a.type = graph::AttrType::kFloat; a.f = v;
    return *this;
  }
  NodeBuilder& s(const std::string& name, const std::string& v) {
    auto& a = node.attributes[name];
    a.name = name; a.type = graph::AttrType::kString; a.s = v;
    return *this;
  }
  NodeBuilder& ints(const std::string& name, std::vector<int64_t> v) {
    auto& a = node.attributes[name];
    a.name = name; a.type = graph::AttrType::kInts; a.ints = std::move(v);
    return *this;
  }
};

template <class T>
Tensor make_tensor(DataType dt, const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(dt, shape).value();
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.numel()); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

// Creates the op through the registry and runs it once.
inline Result<std::vector<Tensor>> run_op(const graph::Node& node, int64_t opset, std::vector<const Tensor*> inputs,
                                          int threads = 1) {
  GB_ASSIGN_OR_RETURN(auto op, create_op(node, opset));
  TestContext ctx(std::move(inputs), node.outputs.size(), threads);
  GB_RETURN_IF_ERROR(op->compute(ctx));
  std::vector<Tensor> outs;
  for (size_t i = 0; i < node.outputs.size(); ++i) outs.push_back(ctx.output(i));
  return outs;
}

}  // namespace glassbox::ops::testing
