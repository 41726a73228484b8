#include "graph/column_concat.h"

#include <cstring>
#include <mutex>
#include <string>

namespace glassbox::graph {
namespace {

class ColumnConcatBuffer final : public Buffer {
 public:
  ColumnConcatBuffer(std::vector<Tensor> parts, int64_t rows, size_t row_bytes)
      : parts_(std::move(parts)), rows_(rows), row_bytes_(row_bytes) {}

  const void* data() const override {
    std::lock_guard<std::mutex> lock(mu_);
    pinned_ = true;
    return join();
  }
  void* mutable_data() override { return nullptr; }  // read-only, like the parts
  size_t size() const override { return static_cast<size_t>(rows_) * row_bytes_; }
  const void* source_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return join();
  }
  void release_pages(size_t offset, size_t size) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pinned_ && offset == 0 && size >= this->size()) copy_.reset();
  }

 private:
  // The joined bytes (made now if absent). Caller holds mu_.
  const void* join() const {
    if (copy_) return copy_->data();
    copy_ = make_owned_buffer(size());
    char* dst = static_cast<char*>(copy_->mutable_data());
    size_t col = 0;
    for (const Tensor& p : parts_) {
      const size_t part_row = p.nbytes() / static_cast<size_t>(rows_);
      const char* src = static_cast<const char*>(p.buffer()->source_bytes()) + p.byte_offset();
      for (int64_t r = 0; r < rows_; ++r)
        std::memcpy(dst + static_cast<size_t>(r) * row_bytes_ + col, src + static_cast<size_t>(r) * part_row, part_row);
      p.buffer()->release_pages(p.byte_offset(), p.nbytes());  // the parts are not read again
      col += part_row;
    }
    return copy_->data();
  }

  std::vector<Tensor> parts_;
  int64_t rows_;
  size_t row_bytes_;
  mutable std::mutex mu_;
  mutable bool pinned_ = false;
  mutable std::shared_ptr<Buffer> copy_;
};

Error concat_error(const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, what, "concat_columns_lazily",
                    "join only rank-2 numeric tensors with the same row count and dtype");
}

}  // namespace

Result<Tensor> concat_columns_lazily(std::vector<Tensor> parts) {
  if (parts.empty()) return concat_error("no tensors to join");
  const DataType dtype = parts[0].dtype();
  if (dtype == DataType::kString || dtype == DataType::kUndefined)
    return concat_error(std::string("cannot join ") + dtype_name(dtype) + " tensors");
  int64_t rows = -1, columns = 0;
  for (const Tensor& p : parts) {
    if (p.rank() != 2 || p.dtype() != dtype || !p.buffer())
      return concat_error("part " + std::string(dtype_name(p.dtype())) + shape_to_string(p.shape()) +
                          " is not a rank-2 " + dtype_name(dtype) + " tensor with storage");
    if (rows >= 0 && p.shape()[0] != rows)
      return concat_error("parts have " + std::to_string(rows) + " and " + std::to_string(p.shape()[0]) + " rows");
    rows = p.shape()[0];
    columns += p.shape()[1];
  }
  if (rows == 0) return concat_error("parts have no rows");
  const size_t row_bytes = static_cast<size_t>(columns) * dtype_size(dtype);
  auto buffer = std::make_shared<ColumnConcatBuffer>(std::move(parts), rows, row_bytes);
  return Tensor::view(dtype, Shape{rows, columns}, std::move(buffer));
}

}  // namespace glassbox::graph
