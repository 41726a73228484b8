// NumPy arrays <-> glassbox::Tensor.
// In: an array whose dtype is the declared one is viewed, not copied, when it is C-contiguous,
// aligned and in native byte order; otherwise one C-contiguous native copy is made (never a
// dtype conversion: a wrong dtype is InvalidInput). The view keeps a reference to the array
// (released under the GIL) and is read-only to the engine.
// Out: an output array views the output tensor's storage (owned by the result, never shared
// with inputs or the arena), kept alive by the array's base capsule: no copy.
#pragma once

#include <string>

#include "common.h"
#include "glassbox/tensor.h"

namespace glassbox::py_binding {

struct FeedTensor {
  Tensor tensor;
  bool copied = false;  // true when layout forced a copy
};

// `what` names the feed in messages ("feed 'input_ids'").
FeedTensor tensor_from_array(const py::handle& obj, const std::string& what);
py::array array_from_tensor(const Tensor& t, const std::string& what);
// numpy dtype name of a glassbox dtype ("float32"; "bfloat16" has none in numpy).
std::string numpy_dtype_name(DataType t);

}  // namespace glassbox::py_binding
