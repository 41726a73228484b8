// This CPU as glassbox's kernels see it, and the declared rule for each precision on it
// (docs/runtime.md "Precision and the CPU"). Detected once per process: the same features every
// x86 dispatch in the kernels reads (src/kernels/cpu_features.h).
#pragma once

#include <string>
#include <vector>

#include "glassbox/session.h"

namespace glassbox {

// The declared rule for a precision on this CPU, decided at load (docs/runtime.md "Precision
// and the CPU"): a precision runs only where the CPU executes its products natively, else
// Session::load refuses it (kUnsupported) naming the missing features and the alternatives.
// fp32 and int8-dynamic run on every x86-64 CPU (int8 without AVX512_VNNI on exact, slower
// loops); bf16 needs AVX512_BF16 or AMX_BF16.
struct PrecisionOnCpu {
  Precision precision = Precision::kFp32;
  bool runs = true;  // false: Session::load refuses this precision on this CPU
  std::string how;   // runs: the kernel and its speed class; refused: what is missing and what this CPU has
  std::string fix;   // refused: the alternatives
};
PrecisionOnCpu precision_on_cpu(Precision p);

// This CPU as glassbox's kernels see it, detected once per process (the one set of features
// every x86 dispatch reads), and the kernel family each op class runs on it: printed by
// `glassbox explain` and the server's /v2 metadata (the dispatch, declared like any default).
struct CpuKernel {
  std::string op_class;  // "GEMM fp32 (...)", "elementwise math (...)", ...
  std::string kernel;    // what runs, e.g. "oneDNN matmul brg:avx2", "x86/vmath_avx2.cpp"
  std::string speed;     // expected speed class and the features that decide it
};
struct CpuReport {
  std::string vendor;                  // "GenuineIntel", "AuthenticAMD", ...
  std::vector<std::string> features;   // the vector features found: "sse4.2", "avx2", "avx512_bf16", ...
  std::string onednn;                  // "oneDNN 2.6.3, ISA avx2"
  std::vector<CpuKernel> kernels;      // one row per op class
  std::vector<PrecisionOnCpu> precisions;  // fp32, bf16, int8-dynamic on this CPU
};
const CpuReport& cpu_report();  // computed on first call (probes oneDNN once), then constant

}  // namespace glassbox
