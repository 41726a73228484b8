#include "core/tensor_rows.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace glassbox {
namespace {

Status rows_apply(const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kString)
    return make_error(ErrorCode::kUnsupported, std::string(what) + ": string tensors are not split or stacked by rows");
  if (t.rank() == 0) return make_error(ErrorCode::kInvalidArgument, std::string(what) + ": a scalar has no rows");
  return {};
}

}  // namespace

Result<Tensor> copy_rows(const Tensor& t, int64_t begin, int64_t count) {
  GB_RETURN_IF_ERROR(rows_apply(t, "copy_rows"));
  const int64_t rows = t.shape()[0];
  if (begin < 0 || count < 0 || begin + count > rows)
    return make_error(ErrorCode::kInvalidArgument, "copy_rows: rows [" + std::to_string(begin) + ", " +
                                                       std::to_string(begin + count) + ") of " + shape_to_string(t.shape()));
  Shape shape = t.shape();
  shape[0] = count;
  GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(t.dtype(), shape));
  const size_t row_bytes = rows ? t.nbytes() / static_cast<size_t>(rows) : 0;
  if (out.nbytes())
    std::memcpy(out.mutable_raw(), static_cast<const char*>(t.raw()) + row_bytes * static_cast<size_t>(begin), out.nbytes());
  return out;
}

Result<Tensor> concat_rows(const std::vector<const Tensor*>& parts) {
  if (parts.empty()) return make_error(ErrorCode::kInvalidArgument, "concat_rows: no tensors");
  const Tensor& first = *parts.front();
  GB_RETURN_IF_ERROR(rows_apply(first, "concat_rows"));
  Shape shape = first.shape();
  shape[0] = 0;
  for (const Tensor* p : parts) {
    const bool same = p->dtype() == first.dtype() && p->rank() == first.rank() &&
                      std::equal(p->shape().begin() + 1, p->shape().end(), first.shape().begin() + 1);
    if (!same)
      return make_error(ErrorCode::kInvalidArgument, "concat_rows: " + std::string(dtype_name(p->dtype())) +
                                                         shape_to_string(p->shape()) + " does not stack with " +
                                                         dtype_name(first.dtype()) + shape_to_string(first.shape()));
    shape[0] += p->shape()[0];
  }
  GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(first.dtype(), shape));
  char* dst = static_cast<char*>(out.mutable_raw());
  for (const Tensor* p : parts) {
    if (p->nbytes()) std::memcpy(dst, p->raw(), p->nbytes());
    dst += p->nbytes();
  }
  return out;
}

}  // namespace glassbox
