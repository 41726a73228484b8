// The CPU's instruction-set features, detected once per process (x86-64: cpuid through GCC's
// __builtin_cpu_supports, which also checks that the OS saves the vector state; aarch64: the
// kernel's getauxval(AT_HWCAP / AT_HWCAP2) bits, which say what user space may execute): the one
// source every x86 dispatch in kernels/ reads, and what `glassbox explain` and the server's
// /v2 metadata report (through glassbox::cpu_report(), runtime/cpu_info.cpp).
// A kernel compiled with __attribute__((target("..."))) runs only when the level below that
// names all of its target features is true.
#pragma once

#include <string>
#include <vector>

// 1 where the x86 kernels (kernels/x86/, the AVX2/AVX-512 loops of quantize_fast.cpp and
// gemm_int8_dnnl.cpp) are compiled; elsewhere (aarch64) those sources are left out or their
// vector blocks compile away, every dispatch level below is false, and the scalar / oneDNN
// paths run (kernels/portable/x86_absent.cpp holds the absent entry points).
#if defined(__x86_64__) || defined(__i386__)
#define GLASSBOX_KERNELS_X86 1
#else
#define GLASSBOX_KERNELS_X86 0
#endif

namespace glassbox::kernels {

struct CpuFeatures {
  std::string vendor;  // cpuid leaf 0: "GenuineIntel", "AuthenticAMD", ...
  bool sse4_1 = false, sse4_2 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512vnni = false, avx512bf16 = false, avxvnni = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
  // aarch64 (all false on x86): Advanced SIMD (NEON), FP16 arithmetic, dot product, SVE/SVE2,
  // BFloat16 (FEAT_BF16) and int8 matrix multiply (FEAT_I8MM). No glassbox kernel has an ARM
  // vector form yet: they are reported so `explain` says what the CPU offers and what runs.
  bool asimd = false, fphp = false, asimddp = false, sve = false, sve2 = false, arm_bf16 = false, i8mm = false;
  std::string arch;  // "x86-64" or "aarch64"

  // The dispatch levels (each the exact feature set of the target attributes it guards).
  bool avx2_fma() const { return avx2 && fma; }                        // x86/vmath_avx2.cpp
  bool avx512_dq_fma() const { return avx512f && avx512dq && fma; }    // x86/vmath_avx512.cpp, x86/rows_avx512.cpp
  bool avx512_bw() const { return avx512f && avx512bw; }               // quantize_fast.cpp
  bool avx512_bw_dq() const { return avx512f && avx512bw && avx512dq; }  // gemm_int8_dnnl.cpp row loops
  bool avx512_bf16_convert() const { return avx512f && avx512bf16; }   // x86/bf16_convert.cpp
  // oneDNN's u8 x s8 products take the packed VNNI path (with the AVX-512 row loops above).
  bool int8_vnni() const { return avx512vnni && avx512_bw_dq(); }
  // Native bfloat16 products (oneDNN avx512_core_bf16 or AMX): what precision bf16 needs.
  bool bf16_native() const { return (avx512bf16 && avx512_bw_dq() && avx512vl) || amx_bf16; }
};

// This CPU, detected on first use (thread-safe), then constant.
const CpuFeatures& cpu_features();

// The features that are true, lowercase, in the order of the struct ("sse4.1 sse4.2 avx ...").
std::vector<std::string> cpu_feature_names(const CpuFeatures& f);

}  // namespace glassbox::kernels
