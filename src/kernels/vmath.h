// Vectorized float32 math over arrays, chosen at run time by CPU features
// (AVX2+FMA variant in x86/vmath_avx2.cpp, else a scalar loop over libm).
// Accuracy of the AVX2 variants (tested against libm in tests/ops_math):
// exp/sigmoid ~2 ulp, tanh/erf < 1e-6 absolute + 2e-6 relative.
#pragma once

#include <cstdint>

namespace glassbox::kernels {

void vexp_f32(const float* x, float* y, int64_t n);
void vtanh_f32(const float* x, float* y, int64_t n);
void verf_f32(const float* x, float* y, int64_t n);
void vsigmoid_f32(const float* x, float* y, int64_t n);
// y = 0.5 x (1 + erf(x / sqrt 2)) with verf_f32's erf, each operation rounded on its own
// (the AVX-512 form equals the scalar-around-verf_f32 form bit for bit); y may alias x.
void vgelu_erf_f32(const float* x, float* y, int64_t n);

// Scalar versions (libm), the reference for tests.
void vexp_f32_reference(const float* x, float* y, int64_t n);
void vtanh_f32_reference(const float* x, float* y, int64_t n);
void verf_f32_reference(const float* x, float* y, int64_t n);
void vsigmoid_f32_reference(const float* x, float* y, int64_t n);

}  // namespace glassbox::kernels
