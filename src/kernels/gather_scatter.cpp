#include "kernels/gather_scatter.h"

#include <cstring>
#include <vector>

namespace glassbox::kernels {
namespace {

// Walks every position of idx_shape, yielding (linear position j, flat data offset).
template <class Fn>
void walk(int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis, const int64_t* idx, Fn fn) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= idx_shape[d];
  if (total == 0) return;
  std::vector<int64_t> dstride(static_cast<size_t>(rank)), pos(static_cast<size_t>(rank), 0);
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    dstride[d] = s;
    s *= data_shape[d];
  }
  for (int64_t j = 0; j < total; ++j) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += (d == axis ? idx[j] : pos[d]) * dstride[d];
    fn(j, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < idx_shape[d]) break;
      pos[d] = 0;
    }
  }
}

}  // namespace

void gather_elements(size_t es, int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                     const void* data, const int64_t* idx, void* out) {
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  walk(rank, data_shape, idx_shape, axis, idx,
       [&](int64_t j, int64_t off) { std::memcpy(dst + j * es, src + off * es, es); });
}

void scatter_elements(size_t es, int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                      const int64_t* idx, const void* updates, void* out) {
  const char* src = static_cast<const char*>(updates);
  char* dst = static_cast<char*>(out);
  walk(rank, data_shape, idx_shape, axis, idx,
       [&](int64_t j, int64_t off) { std::memcpy(dst + off * es, src + j * es, es); });
}

void scatter_elements_offsets(int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                              const int64_t* idx, int64_t* offsets) {
  walk(rank, data_shape, idx_shape, axis, idx, [&](int64_t j, int64_t off) { offsets[j] = off; });
}

void gather_slices(size_t slice_bytes, int64_t count, const int64_t* offsets, const void* data, void* out) {
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  for (int64_t j = 0; j < count; ++j)
    std::memcpy(dst + j * slice_bytes, src + offsets[j] * static_cast<int64_t>(slice_bytes), slice_bytes);
}

void scatter_slices(size_t slice_bytes, int64_t count, const int64_t* offsets, const void* updates, void* out) {
  const char* src = static_cast<const char*>(updates);
  char* dst = static_cast<char*>(out);
  for (int64_t j = 0; j < count; ++j)
    std::memcpy(dst + offsets[j] * static_cast<int64_t>(slice_bytes), src + j * slice_bytes, slice_bytes);
}

}  // namespace glassbox::kernels
