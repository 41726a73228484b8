#include "kernels/data_movement.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

struct B16 {
  uint64_t a, b;
};

template <class T>
void copy_strided_inner(const T* s, int64_t stride, int64_t n, T* d) {
  if (stride == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
  } else if (stride == 0) {
    const T v = *s;
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
  }
}

// Merges dims where the source is contiguous across them and drops size-1 dims.
int collapse(int rank, const int64_t* shape, const int64_t* strides, int64_t* cs, int64_t* cst) {
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (shape[i] == 1) continue;
    if (r > 0 && cst[r - 1] == strides[i] * shape[i]) {
      cs[r - 1] *= shape[i];
      cst[r - 1] = strides[i];
    } else {
      cs[r] = shape[i];
      cst[r] = strides[i];
      ++r;
    }
  }
  if (r == 0) {
    cs[0] = 1;
    cst[0] = 1;
    r = 1;
  }
  return r;
}

// Transpose-like copies: after collapsing, the source is contiguous along the
// second-to-last output dim and strided along the last. Copy 32x32 tiles so
// both sides stay in cache.
template <class T>
void tiled_transpose_t(int r, const int64_t* shape, const int64_t* strides, const T* src, T* dst, ThreadPool* pool) {
  constexpr int64_t kTile = 32;
  const int64_t rows = shape[r - 2], cols = shape[r - 1], cs = strides[r - 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int d = 0; d < r - 2; ++d) outer *= shape[d];
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t job = b; job < e; ++job) {
      const int64_t o = job / row_tiles, i0 = (job % row_tiles) * kTile;
      int64_t rem = o, off = 0;
      for (int d = r - 3; d >= 0; --d) {
        off += (rem % shape[d]) * strides[d];
        rem /= shape[d];
      }
      const T* s = src + off;
      T* dp = dst + o * rows * cols;
      const int64_t i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) dp[i * cols + j] = s[i + j * cs];
      }
    }
  };
  const int64_t jobs = outer * row_tiles;
  if (pool && jobs > 1) pool->parallel_for(jobs, std::max<int64_t>(1, 64 * 1024 / (kTile * std::max<int64_t>(1, cols))), body);
  else body(0, jobs);
}

template <class T>
void strided_copy_t(int rank, const int64_t* shape_in, const void* src_v, const int64_t* strides_in, void* dst_v,
                    ThreadPool* pool) {
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) total *= shape_in[i];
  if (total == 0) return;
  std::vector<int64_t> shape(static_cast<size_t>(std::max(rank, 1))), strides(shape.size());
  const int r = collapse(rank, shape_in, strides_in, shape.data(), strides.data());
  const T* src = static_cast<const T*>(src_v);
  T* dst = static_cast<T*>(dst_v);
  const int64_t inner = shape[r - 1];
  const int64_t inner_stride = strides[r - 1];
  if (r >= 2 && strides[r - 2] == 1 && inner_stride > 1 && shape[r - 2] >= 8 && inner >= 8) {
    tiled_transpose_t<T>(r, shape.data(), strides.data(), src, dst, pool);
    return;
  }
  const int64_t rows = total / inner;
  auto body = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    // Multi-index of row `begin` over the outer dims.
    int64_t rem = begin, off = 0;
    for (int d = r - 2; d >= 0; --d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      off += idx[d] * strides[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      copy_strided_inner(src + off, inner_stride, inner, dst + row * inner);
      for (int d = r - 2; d >= 0; --d) {
        off += strides[d];
        if (++idx[d] < shape[d]) break;
        off -= strides[d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner));
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

template <class T>
void strided_copy_ref_t(int rank, const int64_t* shape, const void* src_v, const int64_t* strides, void* dst_v) {
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) total *= shape[i];
  const T* src = static_cast<const T*>(src_v);
  T* dst = static_cast<T*>(dst_v);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (rem % shape[d]) * strides[d];
      rem /= shape[d];
    }
    dst[i] = src[off];
  }
}

}  // namespace

void strided_copy(size_t elem_size, int rank, const int64_t* out_shape, const void* src, const int64_t* src_strides,
                  void* dst, ThreadPool* pool) {
  switch (elem_size) {
    case 1: return strided_copy_t<uint8_t>(rank, out_shape, src, src_strides, dst, pool);
    case 2: return strided_copy_t<uint16_t>(rank, out_shape, src, src_strides, dst, pool);
    case 4: return strided_copy_t<uint32_t>(rank, out_shape, src, src_strides, dst, pool);
    case 8: return strided_copy_t<uint64_t>(rank, out_shape, src, src_strides, dst, pool);
    case 16: return strided_copy_t<B16>(rank, out_shape, src, src_strides, dst, pool);
    default: return;
  }
}

void strided_copy_reference(size_t elem_size, int rank, const int64_t* out_shape, const void* src,
                            const int64_t* src_strides, void* dst) {
  switch (elem_size) {
    case 1: return strided_copy_ref_t<uint8_t>(rank, out_shape, src, src_strides, dst);
    case 2: return strided_copy_ref_t<uint16_t>(rank, out_shape, src, src_strides, dst);
    case 4: return strided_copy_ref_t<uint32_t>(rank, out_shape, src, src_strides, dst);
    case 8: return strided_copy_ref_t<uint64_t>(rank, out_shape, src, src_strides, dst);
    case 16: return strided_copy_ref_t<B16>(rank, out_shape, src, src_strides, dst);
    default: return;
  }
}

void copy_rows(int64_t rows, size_t row_bytes, const void* src, size_t src_pitch, void* dst, size_t dst_pitch,
               ThreadPool* pool) {
  if (rows <= 0 || row_bytes == 0) return;
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, row_bytes);
  };
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(65536 / row_bytes));
  if (pool && rows > grain) pool->parallel_for(rows, grain, body);
  else body(0, rows);
}

void gather_axis(int64_t outer, int64_t axis_dim, size_t inner_bytes, const void* src, const int64_t* idx,
                 int64_t n_idx, void* dst, ThreadPool* pool) {
  if (outer <= 0 || n_idx <= 0 || inner_bytes == 0) return;
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / n_idx, j = k % n_idx;
      std::memcpy(d + k * inner_bytes, s + (o * axis_dim + idx[j]) * inner_bytes, inner_bytes);
    }
  };
  const int64_t n = outer * n_idx;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(65536 / inner_bytes));
  if (pool && n > grain) pool->parallel_for(n, grain, body);
  else body(0, n);
}

void fill_elements(size_t elem_size, const void* value, int64_t n, void* dst) {
  char* d = static_cast<char*>(dst);
  if (n <= 0) return;
  std::memcpy(d, value, elem_size);
  // Doubling copies: log(n) memcpy calls.
  int64_t done = 1;
  while (done < n) {
    const int64_t c = std::min(done, n - done);
    std::memcpy(d + done * elem_size, d, static_cast<size_t>(c) * elem_size);
    done += c;
  }
}

}  // namespace glassbox::kernels
