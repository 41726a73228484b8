// Normalization kernels (float32).
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// Per row of `cols`: y = (x - mean) / sqrt(var + eps) * scale + bias.
// scale/bias have `cols` elements, or 1 when *_scalar; bias may be nullptr.
// mean/inv_std (one per row) may be nullptr.
void layer_norm_f32(int64_t rows, int64_t cols, const float* x, const float* scale, bool scale_scalar,
                    const float* bias, bool bias_scalar, float eps, float* y, float* mean, float* inv_std,
                    ThreadPool* pool);

// Inference batch norm over [n, c, spatial]: y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
void batch_norm_f32(int64_t n, int64_t c, int64_t spatial, const float* x, const float* scale, const float* bias,
                    const float* mean, const float* var, float eps, float* y, ThreadPool* pool);

// Instance norm over [n, c, spatial]: statistics per (n, c).
void instance_norm_f32(int64_t n, int64_t c, int64_t spatial, const float* x, const float* scale, const float* bias,
                       float eps, float* y, ThreadPool* pool);

// LRN across channels of [n, c, spatial] (computed in ONNX Runtime's order: a running sum of squares):
// y = x / (bias + alpha/size * sum_{window} x^2)^beta, window [c - floor((size-1)/2), c + ceil((size-1)/2)].
void lrn_f32(int64_t n, int64_t c, int64_t spatial, const float* x, int64_t size, float alpha, float beta,
             float bias, float* y);

// Lp normalization along an axis: data viewed as [outer, axis_dim, inner].
void lp_norm_f32(int64_t outer, int64_t axis_dim, int64_t inner, const float* x, int64_t p, float* y);

}  // namespace glassbox::kernels
