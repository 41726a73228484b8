// N-D padding (dtype-agnostic: elements of elem_size bytes). Negative pads crop.
#pragma once

#include <cstddef>
#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

enum class PadMode { kConstant, kReflect, kEdge };

// out_shape[d] = in_shape[d] + pad_begin[d] + pad_end[d]. value: one element (constant mode).
// Reflect needs in_shape[d] >= 2 wherever that dim is padded (callers check).
void pad_nd(size_t elem_size, int rank, const int64_t* in_shape, const int64_t* out_shape, const int64_t* pad_begin,
            PadMode mode, const void* value, const void* src, void* dst, ThreadPool* pool);

}  // namespace glassbox::kernels
