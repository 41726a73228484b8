// The x86 kernels' entry points where kernels/x86/ is not compiled (aarch64 and any other
// non-x86 target; kernels/CMakeLists.txt picks this file instead). Every availability check
// answers false, so vmath.cpp, softmax.cpp and layer_norm.cpp take their scalar paths; the
// vector entry points are then never called, and if one were they run the scalar reference
// they are documented to equal (the same results), never an abort.
#include "kernels/cpu_features.h"

#if GLASSBOX_KERNELS_X86
#error "kernels/portable/x86_absent.cpp is for non-x86 targets: kernels/CMakeLists.txt compiles kernels/x86/ here"
#endif

#include <cstdint>

#include "kernels/layer_norm.h"
#include "kernels/matmul_nbits.h"
#include "kernels/softmax.h"
#include "kernels/vmath.h"

namespace glassbox::kernels::x86 {

bool avx2_available() { return false; }
bool avx512_available() { return false; }

void vexp_f32_avx2(const float* x, float* y, int64_t n) { vexp_f32_reference(x, y, n); }
void vtanh_f32_avx2(const float* x, float* y, int64_t n) { vtanh_f32_reference(x, y, n); }
void verf_f32_avx2(const float* x, float* y, int64_t n) { verf_f32_reference(x, y, n); }
void vsigmoid_f32_avx2(const float* x, float* y, int64_t n) { vsigmoid_f32_reference(x, y, n); }
void vexp_f32_avx512(const float* x, float* y, int64_t n) { vexp_f32_reference(x, y, n); }
void verf_f32_avx512(const float* x, float* y, int64_t n) { verf_f32_reference(x, y, n); }
void vgelu_erf_f32_avx512(const float* x, float* y, int64_t n) { vgelu_erf_f32(x, y, n); }

void layer_norm_row_avx512(const float* x, int64_t n, const float* gamma, const float* beta, float eps, float* y) {
  layer_norm_row_f32_scalar(x, n, gamma, beta, eps, y);
}
void scaled_masked_softmax_row_avx512(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                      float scale) {
  scaled_masked_softmax_row_f32_scalar(x, mask, mask_stride, y, n, scale);
}

void matmul_nbits_f32_avx512(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                             int64_t ldy) {
  matmul_nbits_f32_form(NBitsForm::kScalar, a, w, n0, n1, Y, ldy);
}
void dequantize_nbits_rows_avx512(const NBitsWeights& w, int64_t k_padded, int64_t n0, int64_t n1, float* out) {
  dequantize_nbits_rows(w, k_padded, n0, n1, out);  // never reached: its availability check is false here
}
void matmul_nbits_int8_vnni(const NBitsInt8Activations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                            int64_t ldy) {
  matmul_nbits_int8_form(false, a, w, n0, n1, Y, ldy);
}
void matmul_nbits_f32_avx2(const NBitsActivations& a, const NBitsWeights& w, int64_t n0, int64_t n1, float* Y,
                           int64_t ldy) {
  matmul_nbits_f32_form(NBitsForm::kScalar, a, w, n0, n1, Y, ldy);
}

}  // namespace glassbox::kernels::x86
