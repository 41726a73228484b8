// Pooling kernels (float32, [n*c] planes with 1-3 spatial dims).
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

struct PoolGeometry {
  int spatial = 2;
  int64_t planes = 1;  // n * c
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
};

// Max over each window (padding never wins). indices (optional) receive the
// flat index of the max in the whole input; storage_order 1 = column-major within a plane.
void max_pool_f32(const PoolGeometry& g, const float* x, float* y, int64_t* indices, int storage_order,
                  ThreadPool* pool);
// The same for 8-bit integers (MaxPool accepts uint8/int8 from opset 12).
void max_pool_u8(const PoolGeometry& g, const uint8_t* x, uint8_t* y, int64_t* indices, int storage_order,
                 ThreadPool* pool);
void max_pool_i8(const PoolGeometry& g, const int8_t* x, int8_t* y, int64_t* indices, int storage_order,
                 ThreadPool* pool);
// Average over each window; count_include_pad counts padded positions (up to the end padding) in the divisor.
void avg_pool_f32(const PoolGeometry& g, const float* x, float* y, bool count_include_pad, ThreadPool* pool);
// Global average / max of each plane of `size` elements.
void global_pool_f32(int64_t planes, int64_t size, const float* x, float* y, bool is_max, ThreadPool* pool);

}  // namespace glassbox::kernels
