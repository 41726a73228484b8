#include "arrays.h"

#include <pybind11/complex.h>

#include <complex>
#include <memory>

namespace glassbox::py_binding {
namespace {

// Storage of a viewed array: holds a reference, dropped with the GIL held whichever thread
// releases the last Tensor.
class ArrayBuffer final : public Buffer {
 public:
  explicit ArrayBuffer(py::array a) : array_(std::move(a)), data_(array_.data()), size_(static_cast<size_t>(array_.nbytes())) {}
  ~ArrayBuffer() override {
    py::gil_scoped_acquire gil;
    array_ = py::array();
  }
  const void* data() const override { return data_; }
  void* mutable_data() override { return nullptr; }  // the engine never writes into a caller's array
  size_t size() const override { return size_; }

 private:
  py::array array_;
  const void* data_;
  size_t size_;
};

DataType dtype_of(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'f': return size == 4 ? DataType::kFloat32 : size == 8 ? DataType::kFloat64 : size == 2 ? DataType::kFloat16 : DataType::kUndefined;
    case 'i': return size == 1 ? DataType::kInt8 : size == 2 ? DataType::kInt16 : size == 4 ? DataType::kInt32 : size == 8 ? DataType::kInt64 : DataType::kUndefined;
    case 'u': return size == 1 ? DataType::kUInt8 : size == 2 ? DataType::kUInt16 : size == 4 ? DataType::kUInt32 : size == 8 ? DataType::kUInt64 : DataType::kUndefined;
    case 'b': return size == 1 ? DataType::kBool : DataType::kUndefined;
    case 'c': return size == 8 ? DataType::kComplex64 : size == 16 ? DataType::kComplex128 : DataType::kUndefined;
    default: return DataType::kUndefined;
  }
}

// The numpy dtype of a glassbox dtype (C API look-ups, no string parsing: this is per output per run).
py::dtype numpy_dtype(DataType t) {
  switch (t) {
    case DataType::kFloat32: return py::dtype::of<float>();
    case DataType::kFloat64: return py::dtype::of<double>();
    case DataType::kFloat16: return py::dtype(23);  // NPY_HALF
    case DataType::kInt8: return py::dtype::of<int8_t>();
    case DataType::kInt16: return py::dtype::of<int16_t>();
    case DataType::kInt32: return py::dtype::of<int32_t>();
    case DataType::kInt64: return py::dtype::of<int64_t>();
    case DataType::kUInt8: return py::dtype::of<uint8_t>();
    case DataType::kUInt16: return py::dtype::of<uint16_t>();
    case DataType::kUInt32: return py::dtype::of<uint32_t>();
    case DataType::kUInt64: return py::dtype::of<uint64_t>();
    case DataType::kBool: return py::dtype::of<bool>();
    case DataType::kComplex64: return py::dtype::of<std::complex<float>>();
    case DataType::kComplex128: return py::dtype::of<std::complex<double>>();
    default: return py::dtype(numpy_dtype_name(t));
  }
}

}  // namespace

std::string numpy_dtype_name(DataType t) { return t == DataType::kBool ? "bool" : dtype_name(t); }

FeedTensor tensor_from_array(const py::handle& obj, const std::string& what) {
  if (!py::isinstance<py::array>(obj))
    raise_invalid(what + " is a " + type_name(obj) + ", expected a numpy.ndarray", {},
                  "pass numpy.asarray(value, dtype=...) with the model's dtype");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  const DataType dt = dtype_of(a.dtype());
  if (dt == DataType::kUndefined)
    raise_error(make_error(ErrorCode::kUnsupported,
                           what + " has numpy dtype " + std::string(py::str(a.dtype())) + ", which glassbox has no tensor type for",
                           {}, "convert it to a numeric or bool dtype"));
  FeedTensor out;
  const char order = a.dtype().byteorder();
  const bool native = order != '>';  // '=' native, '|' not applicable, '<' native on x86
  const int flags = a.flags();
  if (!(flags & py::array::c_style) || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) || !native) {
    py::object np = py::module_::import("numpy");
    a = np.attr("require")(a, a.dtype().attr("newbyteorder")("="), py::make_tuple("C", "A"));
    out.copied = true;
  }
  Shape shape(a.shape(), a.shape() + a.ndim());
  auto buffer = std::make_shared<ArrayBuffer>(a);
  out.tensor = unwrap(Tensor::view(dt, std::move(shape), std::move(buffer)));
  return out;
}

py::array array_from_tensor(const Tensor& t, const std::string& what) {
  if (t.dtype() == DataType::kBFloat16 || t.dtype() == DataType::kString || t.dtype() == DataType::kUndefined)
    raise_error(make_error(ErrorCode::kUnsupported, what + " is " + dtype_name(t.dtype()) + ", which numpy has no dtype for",
                           {}, "add a Cast to float32 at the end of the graph"));
  py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.numel() == 0 || !t.raw()) return py::array(dt, shape);
  auto* keep = new std::shared_ptr<Buffer>(t.buffer());
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Buffer>*>(p); });
  return py::array(dt, shape, {}, t.raw(), base);
}

}  // namespace glassbox::py_binding
