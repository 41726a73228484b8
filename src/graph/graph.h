// glassbox's own graph IR, built from an ONNX ModelProto by the loader.
// Names follow ONNX: a Value is identified by its tensor name; nodes refer to
// their inputs/outputs by name (an empty input name = optional input absent).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/tensor.h"
#include "glassbox/value.h"

namespace glassbox::graph {

// One dimension of a (possibly symbolic) shape.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // dim_param when symbolic ("batch", "sequence"), empty if unnamed unknown
  bool known() const { return value >= 0; }
  std::string to_string() const { return known() ? std::to_string(value) : (symbol.empty() ? "?" : symbol); }
};

struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;  // false = rank unknown
  std::vector<Dim> dims;   // valid when has_shape
  bool is_tensor = true;   // false for sequence/map/optional types
  // kTensor also for types the engine cannot run (map, sparse, nested sequences): see supported_type.
  ValueType value_type = ValueType::kTensor;
  bool supported_type = true;  // false for map / sparse_tensor / nested sequence types (type_note says which)
  std::string type_note;   // e.g. "sequence<tensor(float)>" when !is_tensor
  std::string shape_string() const;  // "[batch, 128]" or "?" when rank unknown
};

struct Graph;

enum class AttrType { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs,
                      kSparseTensor, kTypeProto };

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  float f = 0.f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

const char* attr_type_name(AttrType t);

struct Node {
  std::string name;     // may be empty in the file; the loader fills "<op_type>_<index>"
  std::string op_type;
  std::string domain;   // "" = ai.onnx
  int64_t domain_opset = 0;  // opset import of `domain` when it is not ai.onnx (loader); ai.onnx nodes get the runtime's
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;

  const Attribute* attr(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? nullptr : &it->second;
  }
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;                    // topologically sorted by the loader
  std::vector<ValueInfo> inputs;              // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::map<std::string, ValueInfo> value_info;  // intermediate values (from the file + shape inference)
  std::map<std::string, Tensor> initializers;   // constant tensors (mapped or borrowed, read-only)
  std::map<std::string, ValueInfo> initializer_info;  // dtype/shape of each initializer
};

// Where an initializer's bytes live.
struct ExternalDataStats {
  int64_t tensors = 0;
  int64_t bytes = 0;
  std::vector<std::string> files;  // relative locations, sorted, unique
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::map<std::string, int64_t> opset_imports;  // domain ("" = ai.onnx) -> version
  std::vector<std::string> functions;             // names of model-local functions (unsupported by the engine)
  Graph graph;

  std::string path;       // file it was loaded from
  int64_t file_bytes = 0;
  ExternalDataStats external_data;
  std::string checker_error;                   // empty = checker passed (or was not run)
  bool checker_ran = false;
  std::vector<std::string> shape_inference_errors;  // non-fatal findings of ONNX shape inference
  bool shape_inference_ran = false;

  int64_t opset(const std::string& domain_name = "") const {
    auto it = opset_imports.find(domain_name == "ai.onnx" ? "" : domain_name);
    return it == opset_imports.end() ? 0 : it->second;
  }
};

}  // namespace glassbox::graph
