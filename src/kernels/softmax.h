// Softmax family over the middle axis of an [outer, n, inner] view.
// opset < 13 coerces to 2-D ([outer, n * ...] with inner = 1); opset 13+ uses
// the axis alone. Max-subtraction keeps exp in range.
#pragma once

#include <cstdint>

namespace glassbox::kernels {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Rows [begin, end) of outer * inner rows; row r reads x[o, 0..n, i].
void softmax_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t begin, int64_t end, SoftmaxKind kind);

// Scalar reference (double accumulation), for tests.
// One row of glassbox::ScaledMaskedSoftmax: y = softmax(x * scale + mask) over n
// elements; mask_stride 1 (a mask row) or 0 (one mask value for the row).
// With AVX-512 it runs x86/rows_avx512.cpp's form of the scalar loops (equal bit for bit).
void scaled_masked_softmax_row_f32(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                   float scale);
// The scalar loops (the reference of the AVX-512 form).
void scaled_masked_softmax_row_f32_scalar(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                          float scale);

void softmax_f32_reference(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, SoftmaxKind kind);

}  // namespace glassbox::kernels
