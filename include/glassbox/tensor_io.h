// Reading and writing tensors as ONNX TensorProto (.pb) and NumPy (.npy) files,
// with the same limits and checks as model loading (sizes must match dims).
#pragma once

#include <string>

#include "glassbox/error.h"
#include "glassbox/tensor.h"
#include "glassbox/value.h"

namespace glassbox::runtime {

struct LoadedTensor {
  std::string name;  // TensorProto.name ("" for .npy)
  Tensor tensor;     // owned storage
};

// Chooses the format by extension: .npy, otherwise TensorProto.
Result<LoadedTensor> read_tensor_file(const std::string& path);
Result<LoadedTensor> read_tensor_pb(const std::string& path);
Result<Tensor> read_npy(const std::string& path);
// A TensorProto, SequenceProto or OptionalProto file, as the declared type says
// (the backend test data's input_<i>.pb / output_<i>.pb for non-tensor values).
Result<Value> read_value_pb(const std::string& path, ValueType type);

Status write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name);
Status write_npy(const std::string& path, const Tensor& t);
// Writes text to path (created or truncated).
Status write_text_file(const std::string& path, const std::string& text);

// The NumPy dtype string of t ("<f4"), or empty if it has none.
std::string npy_descr(DataType t);

}  // namespace glassbox::runtime
