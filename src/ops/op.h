// The op layer's interface. One ONNX operator per file (src/ops/<op_type>.cpp):
// a typed attribute struct named as in the spec, validation at creation
// (unsupported attribute values fail at load with node/op/opset), and compute
// that calls kernels (src/kernels/, which never see graph types).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "glassbox/error.h"
#include "glassbox/kv_cache.h"
#include "glassbox/precision.h"
#include "glassbox/tensor.h"
#include "glassbox/value.h"
#include "graph/graph.h"

namespace glassbox::ops {

// What compute() sees. Implemented by the runtime.
class ComputeContext {
 public:
  virtual ~ComputeContext() = default;
  virtual size_t num_inputs() const = 0;
  // nullptr when an optional input is absent (empty name) or i >= num_inputs().
  virtual const Tensor* input(size_t i) const = 0;
  virtual size_t num_outputs() const = 0;
  // Allocates output i (zero-filled not guaranteed; from the planned arena when
  // the plan knows it). Fails with kLimitExceeded over the session memory limit:
  // ops must call this BEFORE any large temporary work so shape bombs stop early.
  virtual Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) = 0;
  // Output i shares storage with a tensor the op was given (Reshape, Identity,
  // Squeeze...): no copy. The runtime keeps the storage alive as long as either lives.
  virtual Status alias_output(size_t i, const Tensor& view) = 0;
  // Scratch memory for this compute call only (counted against the memory limit).
  virtual Result<Tensor> allocate_scratch(DataType dtype, const Shape& shape) = 0;
  virtual ThreadPool& pool() = 0;
  // True when input i is an initializer: the same tensor, unchanged, in every run
  // of the session, so an op may cache work derived from it (packed weights).
  virtual bool input_is_constant(size_t) const { return false; }
  // SessionOptions::precision: arithmetic of GEMMs on constant weights (packed path only).
  virtual Precision precision() const { return Precision::kFp32; }
  // The caller's KV cache bound to graph input `input` for this run (Session::run_bound), nullptr when none.
  virtual KvCacheBinding* kv_cache(const std::string& input) {
    (void)input;
    return nullptr;
  }
  // Name and op type of the node, for error messages.
  virtual const std::string& node_name() const = 0;
  // Control flow (If, Loop, Scan): runs the node's graph attribute `attr`, which the
  // runtime compiled with the node, on its formal inputs (in order); outer-scope
  // values it names are captured by the runtime. Returns the body's outputs in
  // storage the op owns. The body's memory counts against the run's limit.
  virtual Result<std::vector<Tensor>> run_subgraph(const std::string& attr, const std::vector<const Tensor*>& inputs) {
    (void)inputs;
    return make_error(ErrorCode::kUnsupported, "this context cannot run subgraph '" + attr + "'", "node '" + node_name() + "'");
  }

  // Sequence and optional values (docs/runtime.md). input() is nullptr for them.
  // The elements of input i when it is a sequence, else nullptr.
  virtual const std::vector<Tensor>* input_sequence(size_t i) const {
    (void)i;
    return nullptr;
  }
  // True when input i is an empty optional.
  virtual bool input_is_none(size_t i) const {
    (void)i;
    return false;
  }
  // Output i becomes a sequence of these (immutable, shared) element tensors.
  virtual Status set_output_sequence(size_t i, std::vector<Tensor> elements) {
    (void)i;
    (void)elements;
    return make_error(ErrorCode::kUnsupported, "this context cannot produce sequence values", "node '" + node_name() + "'");
  }
  // Output i becomes an empty optional.
  virtual Status set_output_none(size_t i) {
    (void)i;
    return make_error(ErrorCode::kUnsupported, "this context cannot produce empty optional values", "node '" + node_name() + "'");
  }
  // Output i becomes a string tensor holding these strings (row-major; numel(shape) of them).
  // String tensors are never allocated as bytes (allocate_output refuses DataType::kString).
  virtual Status set_output_strings(size_t i, const Shape& shape, std::vector<std::string> values) {
    (void)i;
    (void)shape;
    (void)values;
    return make_error(ErrorCode::kUnsupported, "this context cannot produce string tensors", "node '" + node_name() + "'");
  }
  // Output i becomes a sequence of N maps sharing keys [C] (int64 or string): map r = {keys[j] -> values[r, j]}
  // (ZipMap). values is float [N, C].
  virtual Status set_output_map_sequence(size_t i, Tensor keys, Tensor values) {
    (void)i;
    (void)keys;
    (void)values;
    return make_error(ErrorCode::kUnsupported, "this context cannot produce sequences of maps", "node '" + node_name() + "'");
  }
  // run_subgraph for bodies whose inputs/outputs may be sequences or optionals.
  virtual Result<std::vector<Value>> run_subgraph_values(const std::string& attr, const std::vector<Value>& inputs) {
    (void)inputs;
    return make_error(ErrorCode::kUnsupported, "this context cannot run subgraph '" + attr + "'", "node '" + node_name() + "'");
  }

  // Input i as a value (tensor, sequence or none); an absent input is a default (undefined) tensor value.
  Value input_value(size_t i) const {
    if (const auto* seq = input_sequence(i)) return Value::sequence(*seq);
    if (input_is_none(i)) return Value::none();
    const Tensor* t = input(i);
    return t ? Value::of(*t) : Value();
  }
  // Sets output i to v; tensors are aliased (no copy).
  Status set_output_value(size_t i, const Value& v) {
    switch (v.kind) {
      case Value::Kind::kSequence: return set_output_sequence(i, v.elements);
      case Value::Kind::kNone: return set_output_none(i);
      case Value::Kind::kMapSequence: return set_output_map_sequence(i, v.map_keys, v.tensor);
      default: return alias_output(i, v.tensor);
    }
  }
};

class Op {
 public:
  virtual ~Op() = default;
  // Must be thread-safe (const): one Op serves concurrent runs of a session.
  virtual Status compute(ComputeContext& ctx) const = 0;
  // What the op chose when it was created (a kernel, a data layout) and why, for
  // `glassbox explain`; empty when it chose nothing worth reporting.
  virtual std::string load_decision() const { return {}; }
  // What `precision` (SessionOptions::precision other than fp32) makes of this op, given the inputs that
  // are constants at load (constants[i]: input i's value, nullptr when it is computed): explain's op
  // decisions, said by the op whose packing applies the precision. "" when the precision leaves it alone.
  virtual std::string precision_decision(Precision /*precision*/, const std::vector<const Tensor*>& /*constants*/) const {
    return {};
  }
};

// Factory signature each op file defines as create_<OpType> (see registry.cpp).
using OpFactory = Result<std::unique_ptr<Op>> (*)(const graph::Node& node, int64_t opset);

// Creates the op for a node, or a kUnsupported error naming node, op, opset and
// what is missing.
Result<std::unique_ptr<Op>> create_op(const graph::Node& node, int64_t opset);

}  // namespace glassbox::ops
