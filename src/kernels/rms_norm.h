// RMS normalization (ONNX Runtime's SkipSimplifiedLayerNormalization, the norm of Llama-style
// decoders): y = x / sqrt(mean(x^2) + eps) * gamma per row of `cols`, the mean of squares
// accumulated in double (as ORT's CPU kernel) so the result does not depend on the row length's
// rounding. Rows run on `pool`.
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

// x [rows, cols]; gamma [cols]; y [rows, cols] = x / rms * gamma; inv_std [rows] (1 / rms) or nullptr.
void rms_norm_rows_f32(int64_t rows, int64_t cols, const float* x, const float* gamma, float eps, float* y,
                       float* inv_std, ThreadPool* pool);

}  // namespace glassbox::kernels
