// The one ComputeContext for op tests (ops_nn, ops_math, ml): owns inputs/outputs, enforces a byte
// cap on allocations (like the session memory limit), runs on a small pool.
#pragma once

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "graph/graph.h"
#include "ops/op.h"

namespace glassbox::testing_nn {

class TestContext final : public ops::ComputeContext {
 public:
  explicit TestContext(std::vector<Tensor> inputs, size_t num_outputs = 1, size_t byte_cap = size_t{1} << 30,
                       int threads = 3)
      : inputs_(std::move(inputs)), outputs_(num_outputs), pool_(threads), cap_(byte_cap) {}
  // Inputs by pointer (nullptr: an absent optional input), held as copies (a copy shares the buffer).
  explicit TestContext(const std::vector<const Tensor*>& inputs, size_t num_outputs = 1, int threads = 1)
      : TestContext(copies(inputs), num_outputs, size_t{1} << 30, threads) {}

  size_t num_inputs() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override {
    return i < inputs_.size() && inputs_[i].defined() ? &inputs_[i] : nullptr;
  }
  size_t num_outputs() const override { return outputs_.size(); }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    if (i >= outputs_.size()) return make_error(ErrorCode::kInternal, "output index out of range");
    GB_RETURN_IF_ERROR(charge(dtype, shape));
    GB_ASSIGN_OR_RETURN(outputs_[i], Tensor::allocate(dtype, shape));
    return &outputs_[i];
  }
  Status alias_output(size_t i, const Tensor& view) override {
    if (i >= outputs_.size()) return make_error(ErrorCode::kInternal, "output index out of range");
    outputs_[i] = view;
    aliased_.push_back(i);
    return Status::ok_status();
  }
  Result<Tensor> allocate_scratch(DataType dtype, const Shape& shape) override {
    GB_RETURN_IF_ERROR(charge(dtype, shape));
    return Tensor::allocate(dtype, shape);
  }
  ThreadPool& pool() override { return pool_; }
  const std::string& node_name() const override { return name_; }
  Status set_output_strings(size_t i, const Shape& shape, std::vector<std::string> values) override {
    if (i >= outputs_.size()) return make_error(ErrorCode::kInternal, "output index out of range");
    GB_ASSIGN_OR_RETURN(outputs_[i], Tensor::strings(shape, std::move(values)));
    return Status::ok_status();
  }
  Status set_output_map_sequence(size_t i, Tensor keys, Tensor values) override {
    if (i >= outputs_.size()) return make_error(ErrorCode::kInternal, "output index out of range");
    map_keys_ = std::move(keys);
    outputs_[i] = std::move(values);
    return Status::ok_status();
  }

  Tensor& output(size_t i) { return outputs_.at(i); }
  const Tensor& map_keys() const { return map_keys_; }
  bool was_aliased(size_t i) const {
    for (size_t a : aliased_)
      if (a == i) return true;
    return false;
  }
  size_t bytes_charged() const { return used_; }

 private:
  static std::vector<Tensor> copies(const std::vector<const Tensor*>& inputs) {
    std::vector<Tensor> v;
    for (const Tensor* t : inputs) v.push_back(t ? *t : Tensor{});
    return v;
  }
  Status charge(DataType dtype, const Shape& shape) {
    GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
    const double bytes = static_cast<double>(n) * static_cast<double>(dtype_size(dtype));
    if (bytes + static_cast<double>(used_) > static_cast<double>(cap_))
      return make_error(ErrorCode::kLimitExceeded,
                        "allocating " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
                            " would exceed the memory limit of " + std::to_string(cap_) + " bytes",
                        "node '" + name_ + "'");
    used_ += static_cast<size_t>(bytes);
    return Status::ok_status();
  }

  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  Tensor map_keys_;  // set_output_map_sequence
  std::vector<size_t> aliased_;
  ThreadPool pool_;
  size_t cap_;
  size_t used_ = 0;
  std::string name_ = "test_node";
};

// --- builders ---
inline graph::Attribute attr_i(const std::string& name, int64_t v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kInt;
  a.i = v;
  return a;
}
inline graph::Attribute attr_f(const std::string& name, float v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kFloat;
  a.f = v;
  return a;
}
inline graph::Attribute attr_s(const std::string& name, const std::string& v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kString;
  a.s = v;
  return a;
}
inline graph::Attribute attr_is(const std::string& name, std::vector<int64_t> v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kInts;
  a.ints = std::move(v);
  return a;
}
inline graph::Attribute attr_fs(const std::string& name, std::vector<float> v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}
inline graph::Attribute attr_t(const std::string& name, Tensor t) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kTensor;
  a.t = std::move(t);
  return a;
}

inline graph::Node make_node(const std::string& op, std::vector<graph::Attribute> attrs = {}, size_t n_out = 1) {
  graph::Node n;
  n.name = "test_node";
  n.op_type = op;
  for (auto& a : attrs) n.attributes[a.name] = a;
  for (size_t i = 0; i < n_out; ++i) n.outputs.push_back("y" + std::to_string(i));
  return n;
}

template <class T>
Tensor make_tensor(DataType dt, Shape shape, const std::vector<T>& vals) {
  Tensor t = Tensor::allocate(dt, std::move(shape)).value();
  if (!vals.empty()) std::memcpy(t.mutable_raw(), vals.data(), vals.size() * sizeof(T));
  return t;
}
inline Tensor f32(Shape shape, const std::vector<float>& v) { return make_tensor(DataType::kFloat32, shape, v); }
inline Tensor i64(Shape shape, const std::vector<int64_t>& v) { return make_tensor(DataType::kInt64, shape, v); }

inline Tensor random_f32(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::allocate(DataType::kFloat32, std::move(shape)).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = d(rng);
  return t;
}

inline std::vector<float> to_vec(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}
template <class T>
std::vector<T> to_vec_t(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// Creates the op through the engine's registry (src/ops/ops.inc; an op missing there fails the test) and runs it once.
inline Status run_op(const graph::Node& node, int64_t opset, TestContext& ctx) {
  auto op = ops::create_op(node, opset);
  if (!op.ok()) return op.status();
  return op.value()->compute(ctx);
}

}  // namespace glassbox::testing_nn
