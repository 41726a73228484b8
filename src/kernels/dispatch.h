// Which kernel family each op class runs on this CPU, and why: the description of the
// dispatch decisions the kernels make from cpu_features() (kernels own the dispatch; this
// only reports it). glassbox::cpu_report() (runtime/cpu_info.cpp) passes it to `glassbox
// explain` and the server's /v2 metadata.
#pragma once

#include <string>
#include <vector>

namespace glassbox::kernels {

struct KernelFamily {
  std::string op_class;  // "GEMM fp32", "elementwise math", ...
  std::string kernel;    // the code that runs, e.g. "oneDNN matmul brg:avx512_core", "x86/vmath_avx2.cpp"
  std::string speed;     // expected speed class, with the features that decide it
};

// One row per op class, for this CPU (oneDNN implementations probed once, on first call).
std::vector<KernelFamily> kernel_families();

// oneDNN's version and the instruction set it dispatches to here, e.g. "oneDNN 2.6.3, ISA avx2".
std::string onednn_description();

// oneDNN's implementation of the fp32 products (gemm_f32, packed fp32 weights) on this CPU, as
// gemm_bf16_implementation (kernels/gemm.h) for bf16: "brg:avx512_core", "gemm:jit", ... (gemm_dnnl.cpp).
const char* gemm_f32_implementation();

}  // namespace glassbox::kernels
