// A runtime value that is not necessarily a tensor: a tensor, a sequence of
// tensors, or an empty optional ("none"). Used by Session::run_values() and the
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
};

struct Value {
  enum class Kind { kTensor, kSequence, kNone };
  Kind kind = Kind::kTensor;
  Tensor tensor;                 // kind == kTensor
  std::vector<Tensor> elements;  // kind == kSequence

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
  bool defined() const { return kind != Kind::kTensor || tensor.defined(); }
  const char* kind_name() const { return kind == Kind::kTensor ? "tensor" : kind == Kind::kSequence ? "sequence" : "none"; }
};

}  // namespace glassbox
