// A runtime value that is not necessarily a tensor: a tensor, a sequence of
// tensors, an empty optional ("none"), or a sequence of maps sharing one key set
// (ZipMap's seq(map(int64|string, float)); outputs only). Used by Session::run_values() and the
// sequence/optional ops; Session::run() stays tensor-only.
#pragma once

#include <vector>

#include "glassbox/tensor.h"

namespace glassbox {

// The declared type of a graph input/output.
enum class ValueType {
  kTensor,
  kSequence,  // sequence<tensor(T)>
  kOptional,  // optional<tensor(T)> or optional<sequence<tensor(T)>>
  kMapSequence,  // sequence<map<int64|string, float>> (ZipMap): graph outputs only
};

struct Value {
  enum class Kind { kTensor, kSequence, kNone, kMapSequence };
  Kind kind = Kind::kTensor;
  Tensor tensor;                 // kind == kTensor; kMapSequence: the values, [N, C]
  std::vector<Tensor> elements;  // kind == kSequence
  Tensor map_keys;               // kind == kMapSequence: the keys, int64 or string [C]; map i = {map_keys[j] -> tensor[i, j]}

  static Value of(Tensor t) {
    Value v;
    v.tensor = std::move(t);
    return v;
  }
  static Value sequence(std::vector<Tensor> e) {
    Value v;
    v.kind = Kind::kSequence;
    v.elements = std::move(e);
    return v;
  }
  static Value none() {
    Value v;
    v.kind = Kind::kNone;
    return v;
  }
  static Value map_sequence(Tensor keys, Tensor values) {
    Value v;
    v.kind = Kind::kMapSequence;
    v.map_keys = std::move(keys);
    v.tensor = std::move(values);
    return v;
  }
  bool defined() const { return (kind != Kind::kTensor && kind != Kind::kMapSequence) || tensor.defined(); }
  const char* kind_name() const {
    switch (kind) {
      case Kind::kTensor: return "tensor";
      case Kind::kSequence: return "sequence";
      case Kind::kNone: return "none";
      case Kind::kMapSequence: return "sequence of maps";
    }
    return "?";
  }
};

}  // namespace glassbox
