// Index-driven data movement (dtype-agnostic copies of elem_size bytes).
// Indices passed here are already validated and normalized to [0, dim).
#pragma once

#include <cstddef>
#include <cstdint>

namespace glassbox::kernels {

// GatherElements: out[i...] = data[i... with i[axis] = idx[i...]]; idx and out share idx_shape.
void gather_elements(size_t elem_size, int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                     const void* data, const int64_t* idx, void* out);

// ScatterElements without reduction: out (already a copy of data, shape data_shape)
// gets out[i... with i[axis] = idx[i...]] = updates[i...]; updates share idx_shape.
void scatter_elements(size_t elem_size, int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                      const int64_t* idx, const void* updates, void* out);

// Flat element offsets used by ScatterElements with a reduction (typed in the op):
// offsets[j] = flat position in out written by updates[j].
void scatter_elements_offsets(int rank, const int64_t* data_shape, const int64_t* idx_shape, int axis,
                              const int64_t* idx, int64_t* offsets);

// GatherND / ScatterND: `count` slices of slice_bytes; src/dst slice j is at byte offset offsets[j] * slice_bytes.
void gather_slices(size_t slice_bytes, int64_t count, const int64_t* offsets, const void* data, void* out);
void scatter_slices(size_t slice_bytes, int64_t count, const int64_t* offsets, const void* updates, void* out);

}  // namespace glassbox::kernels
