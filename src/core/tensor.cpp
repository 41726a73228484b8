#include "glassbox/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace glassbox {

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::kFloat32: case DataType::kInt32: case DataType::kUInt32: return 4;
    case DataType::kUInt8: case DataType::kInt8: case DataType::kBool: return 1;
    case DataType::kUInt16: case DataType::kInt16: case DataType::kFloat16: case DataType::kBFloat16: return 2;
    case DataType::kInt64: case DataType::kUInt64: case DataType::kFloat64: case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kString: case DataType::kUndefined: return 0;
  }
  return 0;
}

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat32: return "float32";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUInt16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat64: return "float64";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

bool dtype_is_valid(int32_t code) { return code >= 1 && code <= 16; }

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

Result<int64_t> shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return make_error(ErrorCode::kInvalidArgument, "negative dimension in shape " + shape_to_string(s));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return make_error(ErrorCode::kLimitExceeded, "element count of shape " + shape_to_string(s) + " overflows int64");
    n *= d;
  }
  return n;
}

namespace {

class OwnedBuffer final : public Buffer {
 public:
  OwnedBuffer(size_t bytes, bool zero) : size_(bytes) {
    // aligned_alloc needs a size that is a multiple of the alignment.
    size_t rounded = (bytes + 63) / 64 * 64;
    data_ = rounded ? std::aligned_alloc(64, rounded) : nullptr;
    if (rounded && !data_) throw std::bad_alloc();
    if (data_ && zero) std::memset(data_, 0, rounded);
  }
  ~OwnedBuffer() override { std::free(data_); }
  const void* data() const override { return data_; }
  void* mutable_data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

class BorrowedBuffer final : public Buffer {
 public:
  BorrowedBuffer(void* data, size_t bytes, bool writable) : data_(data), size_(bytes), writable_(writable) {}
  const void* data() const override { return data_; }
  void* mutable_data() override { return writable_ ? data_ : nullptr; }
  size_t size() const override { return size_; }

 private:
  void* data_;
  size_t size_;
  bool writable_;
};

// The elements of a string tensor. No addressable bytes (size() 0): byte-based code that
// reaches one sees an empty buffer, and Tensor::view refuses to reinterpret it.
class StringBuffer final : public Buffer {
 public:
  explicit StringBuffer(std::vector<std::string> values) : values_(std::move(values)) {}
  const void* data() const override { return values_.data(); }
  void* mutable_data() override { return nullptr; }
  size_t size() const override { return 0; }
  const std::vector<std::string>* strings() const override { return &values_; }

 private:
  std::vector<std::string> values_;
};

}  // namespace

std::shared_ptr<Buffer> make_owned_buffer(size_t bytes, bool zero) { return std::make_shared<OwnedBuffer>(bytes, zero); }

std::shared_ptr<Buffer> make_borrowed_buffer(void* data, size_t bytes, bool writable) {
  return std::make_shared<BorrowedBuffer>(data, bytes, writable);
}

namespace {

Result<Tensor> allocate_owned(DataType dtype, Shape shape, bool zero) {
  if (dtype_size(dtype) == 0)
    return make_error(ErrorCode::kUnsupported, std::string("cannot allocate a tensor of dtype ") + dtype_name(dtype));
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  const size_t elem = dtype_size(dtype);
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / elem)
    return make_error(ErrorCode::kLimitExceeded, "tensor of shape " + shape_to_string(shape) + " is too large");
  std::shared_ptr<Buffer> buf;
  try {
    buf = make_owned_buffer(static_cast<size_t>(n) * elem, zero);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::kLimitExceeded,
                      "out of memory allocating " + std::to_string(static_cast<size_t>(n) * elem) + " bytes for " +
                          dtype_name(dtype) + " tensor " + shape_to_string(shape));
  }
  return Tensor::view(dtype, std::move(shape), std::move(buf), 0);
}

}  // namespace

Result<Tensor> Tensor::allocate(DataType dtype, Shape shape) { return allocate_owned(dtype, std::move(shape), true); }

Result<Tensor> Tensor::allocate_uninitialized(DataType dtype, Shape shape) {
  return allocate_owned(dtype, std::move(shape), false);
}

Result<Tensor> Tensor::strings(Shape shape, std::vector<std::string> values) {
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  if (static_cast<uint64_t>(n) != values.size())
    return make_error(ErrorCode::kInvalidArgument, "string tensor of shape " + shape_to_string(shape) + " needs " +
                                                       std::to_string(n) + " strings, got " + std::to_string(values.size()));
  return view(DataType::kString, std::move(shape), std::make_shared<StringBuffer>(std::move(values)), 0);
}

const std::string* Tensor::string_data() const {
  if (dtype_ != DataType::kString || !buffer_ || !buffer_->strings()) return nullptr;
  return buffer_->strings()->data();
}

Result<Tensor> Tensor::view(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset) {
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  const auto* strs = buffer ? buffer->strings() : nullptr;
  if ((dtype == DataType::kString) != (strs != nullptr))
    return make_error(ErrorCode::kUnsupported, std::string("a ") + dtype_name(dtype) + " view of " +
                                                   (strs ? "string storage" : "byte storage") + " is not possible",
                      "tensor " + std::string(dtype_name(dtype)) + shape_to_string(shape),
                      "string tensors are made with Tensor::strings and only reshaped, never reinterpreted");
  if (strs && (byte_offset != 0 || strs->size() != static_cast<uint64_t>(n)))
    return make_error(ErrorCode::kUnsupported, "a string tensor view must cover its whole storage (" +
                                                   std::to_string(strs->size()) + " strings) at offset 0",
                      "tensor string" + shape_to_string(shape), "slicing string tensors is not supported");
  const size_t need = static_cast<size_t>(n) * dtype_size(dtype);
  const size_t have = buffer ? buffer->size() : 0;
  if (byte_offset > have || need > have - byte_offset)
    return make_error(ErrorCode::kInvalidArgument,
                      "tensor " + std::string(dtype_name(dtype)) + shape_to_string(shape) + " needs " +
                          std::to_string(need) + " bytes at offset " + std::to_string(byte_offset) + " but buffer has " +
                          std::to_string(have));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = n;
  t.buffer_ = std::move(buffer);
  t.offset_ = byte_offset;
  return t;
}

Result<Tensor> Tensor::reshaped(Shape shape) const {
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  if (n != numel_)
    return make_error(ErrorCode::kInvalidArgument,
                      "cannot reshape " + shape_to_string(shape_) + " to " + shape_to_string(shape));
  return view(dtype_, std::move(shape), buffer_, offset_);
}

Result<Tensor> Tensor::clone() const {
  if (dtype_ == DataType::kString) {
    const std::string* s = string_data();
    return strings(shape_, s ? std::vector<std::string>(s, s + numel_) : std::vector<std::string>());
  }
  GB_ASSIGN_OR_RETURN(Tensor t, allocate(dtype_, shape_));
  if (nbytes()) std::memcpy(t.mutable_raw(), raw(), nbytes());
  return t;
}

}  // namespace glassbox
