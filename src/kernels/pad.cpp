#include "kernels/pad.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

// Source index for output index o of one dim, or -1 for "constant value".
int64_t map_index(int64_t o, int64_t pad_begin, int64_t n, PadMode mode) {
  int64_t i = o - pad_begin;
  if (i >= 0 && i < n) return i;
  if (n == 0) return -1;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i >= n ? period - i : i;
    }
  }
  return -1;
}

}  // namespace

void pad_nd(size_t es, int rank, const int64_t* in_shape, const int64_t* out_shape, const int64_t* pad_begin,
            PadMode mode, const void* value, const void* src_v, void* dst_v, ThreadPool* pool) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= out_shape[d];
  if (total == 0) return;
  const char* src = static_cast<const char*>(src_v);
  char* dst = static_cast<char*>(dst_v);
  if (rank == 0) {
    std::memcpy(dst, src, es);
    return;
  }
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
  std::vector<int64_t> in_strides(static_cast<size_t>(rank));
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= in_shape[d];
    maps[d].resize(static_cast<size_t>(out_shape[d]));
    for (int64_t o = 0; o < out_shape[d]; ++o) maps[d][o] = map_index(o, pad_begin[d], in_shape[d], mode);
  }
  const int64_t inner = out_shape[rank - 1];
  const int64_t rows = total / inner;
  const std::vector<int64_t>& last = maps[rank - 1];
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      char* out = dst + row * inner * static_cast<int64_t>(es);
      int64_t rem = row, off = 0;
      bool constant_row = false;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t o = rem % out_shape[d];
        rem /= out_shape[d];
        const int64_t i = maps[d][o];
        if (i < 0) constant_row = true;
        else off += i * in_strides[d];
      }
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t i = constant_row ? -1 : last[j];
        std::memcpy(out + j * static_cast<int64_t>(es), i < 0 ? value : src + (off + i) * static_cast<int64_t>(es), es);
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner));
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

}  // namespace glassbox::kernels
