// Data-movement kernels: dtype-agnostic (they move elements of a given byte size).
#pragma once

#include <cstddef>
#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// dst (contiguous, shape out_shape[0..rank)) = src viewed with element strides
// src_strides (may be 0 for broadcast or negative for reversed slices).
// elem_size is 1, 2, 4, 8 or 16. pool may be nullptr (single thread).
void strided_copy(size_t elem_size, int rank, const int64_t* out_shape, const void* src, const int64_t* src_strides,
                  void* dst, ThreadPool* pool);
// The same, one element at a time with a full index computation: the reference for tests.
void strided_copy_reference(size_t elem_size, int rank, const int64_t* out_shape, const void* src,
                            const int64_t* src_strides, void* dst);

// rows x row_bytes block copy between pitched buffers (Concat, Split).
void copy_rows(int64_t rows, size_t row_bytes, const void* src, size_t src_pitch, void* dst, size_t dst_pitch,
               ThreadPool* pool);

// Gather along one axis: src is [outer, axis_dim, inner_bytes]; for each outer
// and each j < n_idx copies src[o, idx[j], :] to dst[o, j, :]. Indices must be
// already validated to lie in [0, axis_dim).
void gather_axis(int64_t outer, int64_t axis_dim, size_t inner_bytes, const void* src, const int64_t* idx,
                 int64_t n_idx, void* dst, ThreadPool* pool);

// Fills n elements of elem_size bytes with one value.
void fill_elements(size_t elem_size, const void* value, int64_t n, void* dst);

}  // namespace glassbox::kernels
