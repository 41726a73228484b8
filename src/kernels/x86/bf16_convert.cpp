// float32 -> bfloat16 for the bf16 GEMM path: AVX512-BF16's vcvtneps2bf16 (round to
// nearest even, NaN quieted, denormal inputs read as signed zero) when the CPU has it,
// else the scalar rule of half.h with the same denormal flush, which gives the same bits.
// Compiled with target attributes (no global -mavx512*); on non-x86 targets only the scalar
// rule (kernels/CMakeLists.txt compiles this file everywhere).
#include "kernels/cpu_features.h"

#if GLASSBOX_KERNELS_X86
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/half.h"

namespace glassbox::kernels {
namespace {

uint16_t to_bf16(float f);

bool avx512_bf16_available() {
  return cpu_features().avx512_bf16_convert();
}

#if GLASSBOX_KERNELS_X86
__attribute__((target("avx512f,avx512bf16"))) void convert_avx512_bf16(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh v = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<const __m256i&>(v));
  }
  for (; i < n; ++i) out[i] = to_bf16(in[i]);
}
#else
void convert_avx512_bf16(const float* in, uint16_t* out, int64_t n) {  // never called: no AVX512_BF16 here
  for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(in[i]);
}
#endif

// half.h's rounding, with denormals flushed as the instruction does.
uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0) return static_cast<uint16_t>((x >> 16) & 0x8000u);
  return float_to_bfloat16(f).bits;
}

}  // namespace

void convert_f32_to_bf16(const float* in, uint16_t* out, int64_t n) {
  if (avx512_bf16_available()) {
    convert_avx512_bf16(in, out, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(in[i]);
}

}  // namespace glassbox::kernels
