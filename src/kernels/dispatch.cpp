#include "kernels/dispatch.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"
#include "kernels/matmul_nbits.h"

namespace glassbox::kernels {
namespace {

std::string isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::all: return "all";
    default: break;
  }
  return "0x" + [&] {
    char b[16];
    std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(isa));
    return std::string(b);
  }();
}

// fp32 vector width of oneDNN's and our own fp32 code at this CPU's level.
std::string fp32_lanes(const CpuFeatures& f) {
  if (f.arch == "aarch64")
    return std::string(f.asimd ? "NEON 4 fp32 lanes" : "no Advanced SIMD") + (f.sve ? " and SVE" : "") +
           " (oneDNN's own aarch64 kernel, named above)";
  if (f.avx512_dq_fma()) return "16 fp32 lanes (AVX-512)";
  if (f.avx2_fma()) return "8 fp32 lanes (AVX2+FMA)";
  if (f.avx) return "8 fp32 lanes (AVX, no FMA)";
  if (f.sse4_1) return "4 fp32 lanes (SSE4.1)";
  return "no oneDNN JIT below SSE4.1: reference loops";
}

}  // namespace

std::string onednn_description() {
  const dnnl_version_t* v = dnnl_version();
  const std::string version =
      "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  // dnnl::cpu_isa names x86 levels only; on aarch64 its value is oneDNN's own ISA mask.
  if (cpu_features().arch == "aarch64") {
    char b[48];
    std::snprintf(b, sizeof b, ", aarch64 ISA mask 0x%x", static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
    return version + b;
  }
  return version + ", ISA " + isa_name(dnnl::get_effective_cpu_isa());
}

std::vector<KernelFamily> kernel_families() {
  const CpuFeatures& f = cpu_features();
  std::vector<KernelFamily> rows;
  rows.push_back({"GEMM fp32 (MatMul, Gemm, FusedMatMul, Einsum, attention products)",
                  std::string("oneDNN matmul ") + gemm_f32_implementation(), "vector: " + fp32_lanes(f)});
  const bool arm = f.arch == "aarch64";
  if (arm)
    rows.push_back({"GEMM bf16 (precision bf16)", "none: refused at load",
                    std::string("glassbox's bf16 products are oneDNN's x86 AVX512_BF16 / AMX kernels; Debian's oneDNN for "
                                "aarch64 has no native bf16 matmul (this CPU ") +
                        (f.arm_bf16 ? "has" : "lacks") + " FEAT_BF16)"});
  else if (f.bf16_native())
    rows.push_back({"GEMM bf16 (precision bf16)", std::string("oneDNN matmul ") + gemm_bf16_implementation(),
                    f.amx_bf16 ? "native bfloat16 (AMX tiles)" : "native bfloat16 (AVX512_BF16 dot products)"});
  else
    rows.push_back({"GEMM bf16 (precision bf16)", "none: refused at load",
                    "needs AVX512_BF16 (with AVX512BW/DQ/VL) or AMX_BF16"});
  if (gemm_u8s8_fast_available())
    rows.push_back({"GEMM int8 (MatMulInteger, QLinearMatMul, precision int8-dynamic)",
                    std::string("oneDNN matmul ") + gemm_u8s8_implementation(), "fast: AVX512_VNNI u8 x s8 dot products"});
  else if (arm)
    rows.push_back({"GEMM int8 (MatMulInteger, QLinearMatMul, precision int8-dynamic)", gemm_u8s8_implementation(),
                    std::string("slow: exact int32 loops (the oneDNN int8 fast path is x86 AVX512_VNNI only; this CPU's "
                                "SDOT ") + (f.asimddp ? "and " : "absent, ") + (f.i8mm ? "I8MM are" : "I8MM absent:") +
                        " not used by this build)"});
  else
    rows.push_back({"GEMM int8 (MatMulInteger, QLinearMatMul, precision int8-dynamic)", gemm_u8s8_implementation(),
                    "slow: exact int32 loops without VNNI (oneDNN's non-VNNI int8 kernels are not used: their int16 "
                    "pair sums can saturate)"});
  rows.push_back({"MatMulNBits (com.microsoft, decode rows)",
                  f.avx512_dq_fma() ? "x86/matmul_nbits_x86.cpp AVX-512" : f.avx2_fma() ? "x86/matmul_nbits_x86.cpp AVX2"
                                                                          : "scalar loop (matmul_nbits.cpp)",
                  std::string(f.avx512_dq_fma() || f.avx2_fma() ? "vector: " + fp32_lanes(f) : "1 lane") +
                      ", fp32 from the packed codes (bits 8, bits 4 with block_size % 32 == 0; bits 4 with block 16 "
                      "runs the scalar loop); more than " + std::to_string(kNBitsDirectMaxRows) +
                      " rows: decoded tiles through GEMM fp32"});
  rows.push_back({"MatMulNBits accuracy_level 4 (int8 activations per block)",
                  f.int8_vnni() ? "x86/matmul_nbits_x86.cpp AVX-512 VNNI" : "scalar loop (matmul_nbits.cpp)",
                  f.int8_vnni() ? "fast: u8 codes x s8 activations, 64 bytes per vpdpbusd"
                                : "slow: exact int32 loops without AVX512_VNNI (same numbers)"});
  rows.push_back({"Conv, ConvTranspose", "oneDNN convolution, chosen per shape at first run (reference loops where "
                                         "oneDNN has no implementation)",
                  "vector: " + fp32_lanes(f)});
  rows.push_back({"attention (fused)", "GEMM fp32 above + softmax rows below, per (batch, head) on the pool",
                  "as GEMM fp32"});
  rows.push_back({"elementwise math (Exp, Tanh, Erf, Sigmoid, Gelu)",
                  f.avx512_dq_fma() ? "x86/vmath_avx512.cpp" : f.avx2_fma() ? "x86/vmath_avx2.cpp" : "scalar libm loops",
                  f.avx512_dq_fma() ? "16 lanes (AVX-512, results equal the AVX2 form)"
                  : f.avx2_fma()    ? "8 lanes (AVX2+FMA)"
                  : arm ? "1 lane (no NEON forms yet: the x86 vector forms are compiled out on aarch64); libm results, "
                          "which may differ from the x86 vector forms in the last bit"
                        : "1 lane (no AVX2+FMA); libm results, which may differ from the vector forms in "
                          "the last bit"});
  rows.push_back({"row kernels (LayerNormalization, Softmax)",
                  f.avx512_dq_fma() ? "x86/rows_avx512.cpp" : "scalar form with 16 accumulators (compiler-vectorized)",
                  f.avx512_dq_fma() ? "16 lanes (AVX-512)" : "the same row arithmetic, without AVX-512"});
  rows.push_back({"quantize rows (DynamicQuantizeLinear, int8-dynamic activations)",
                  f.avx512_bw() ? "quantize_fast.cpp AVX-512" : f.avx2 ? "quantize_fast.cpp AVX2" : "scalar loops",
                  f.avx512_bw() ? "16 lanes (AVX512BW)" : f.avx2 ? "8 lanes (AVX2)" : arm ? "1 lane (aarch64: scalar)" : "1 lane (no AVX2)"});
  rows.push_back({"fp32 -> bf16 conversion (precision bf16 activations)",
                  f.avx512_bf16_convert() ? "x86/bf16_convert.cpp vcvtneps2bf16" : "scalar rounding (same bits)",
                  f.avx512_bf16_convert() ? "16 lanes (AVX512_BF16)" : "1 lane"});
  return rows;
}

}  // namespace glassbox::kernels
