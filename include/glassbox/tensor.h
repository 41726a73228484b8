// Tensor: dtype + shape + storage. Storage is owned (aligned heap), borrowed
// (caller keeps it alive) or mapped (read-only region of a model file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox {

// Values equal ONNX TensorProto.DataType so conversion is a cast.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// Size in bytes of one element; 0 for undefined/string/unknown. String tensors have no
// byte layout (see Tensor::strings), so every byte-based allocation refuses them.
size_t dtype_size(DataType t);
// Lower-case ONNX-ish name: "float32", "int64", "bool", ...
const char* dtype_name(DataType t);
// True if dtype is a known ONNX TensorProto data type code.
bool dtype_is_valid(int32_t code);

using Shape = std::vector<int64_t>;

// "[1, 128, 768]"
std::string shape_to_string(const Shape& s);
// Product of dims; error if a dim is negative or the product overflows int64.
Result<int64_t> shape_numel(const Shape& s);

// A block of bytes. Subclasses decide who owns it.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual const void* data() const = 0;
  virtual void* mutable_data() = 0;  // nullptr if read-only (mapped)
  virtual size_t size() const = 0;
  // The bytes [offset, offset + size) will not be read again soon: a mapped file drops the
  // whole pages inside the range from the resident set (read back from the file if touched
  // again); other buffers ignore it.
  virtual void release_pages(size_t /*offset*/, size_t /*size*/) const {}
  // The buffer's bytes where they lie, without materializing anything (data() of a lazily
  // aligned copy would make the copy): may be misaligned for the element type, so read it
  // with memcpy only. Default: data().
  virtual const void* source_bytes() const { return data(); }
  // Copies bytes [offset, offset + size) into dst without mapping them into the process: a
  // mapped file reads them with pread (page cache, not resident set). false: not supported
  // (read source_bytes() instead).
  virtual bool read_bytes(size_t /*offset*/, size_t /*size*/, void* /*dst*/) const { return false; }
  // The elements of a string buffer (Tensor::strings), nullptr for byte buffers.
  virtual const std::vector<std::string>* strings() const { return nullptr; }
};

// Heap buffer aligned to 64 bytes (one cache line / one AVX-512 register), zero-filled
// unless `zero` is false (then its contents are unspecified until written).
std::shared_ptr<Buffer> make_owned_buffer(size_t bytes, bool zero = true);
// Wraps memory the caller keeps alive for the buffer's lifetime.
std::shared_ptr<Buffer> make_borrowed_buffer(void* data, size_t bytes, bool writable);

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-filled owned storage. Fails on bad shape/dtype.
  static Result<Tensor> allocate(DataType dtype, Shape shape);
  // The same without the zero fill: for storage the caller overwrites in full before
  // anyone reads it (the executor's op outputs: ops write every element, as they must for
  // the memory plan's arena, which is reused between runs and never cleared).
  static Result<Tensor> allocate_uninitialized(DataType dtype, Shape shape);
  // A string tensor (DataType::kString): the elements live in an immutable buffer of
  // std::string (row-major), never in bytes. values.size() must equal the shape's numel.
  static Result<Tensor> strings(Shape shape, std::vector<std::string> values);
  // Views existing storage (shared ownership) at byte_offset. A string view must cover its
  // whole string buffer (same element count, offset 0): reshapes only, never slices.
  static Result<Tensor> view(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t byte_offset = 0);

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool defined() const { return dtype_ != DataType::kUndefined; }
  bool writable() const { return buffer_ && buffer_->mutable_data() != nullptr; }

  const void* raw() const { return buffer_ ? static_cast<const char*>(buffer_->data()) + offset_ : nullptr; }
  void* mutable_raw() {
    return buffer_ && buffer_->mutable_data() ? static_cast<char*>(buffer_->mutable_data()) + offset_ : nullptr;
  }
  template <class T>
  const T* data() const { return static_cast<const T*>(raw()); }
  template <class T>
  T* mutable_data() { return static_cast<T*>(mutable_raw()); }

  // The elements of a string tensor (numel() of them); nullptr for any other dtype.
  const std::string* string_data() const;

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t byte_offset() const { return offset_; }

  // Same storage, new shape with the same element count.
  Result<Tensor> reshaped(Shape shape) const;
  // Deep copy into owned, writable storage (string tensors: a copy of the strings, immutable).
  Result<Tensor> clone() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

}  // namespace glassbox
