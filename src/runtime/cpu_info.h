// The precision rule as a pure function of the CPU's features and oneDNN's implementations,
// so tests can apply it to other CPUs (an AVX2-only EPYC, an SSE4.2-only Nehalem) than the
// one they run on. glassbox::precision_on_cpu applies it to this CPU.
#pragma once

#include <string>

#include "glassbox/session.h"
#include "glassbox/cpu.h"
#include "kernels/cpu_features.h"

namespace glassbox::runtime {

struct GemmImplementations {
  std::string fp32, bf16, u8s8;  // kernels::gemm_*_implementation() on the CPU in question
};

PrecisionOnCpu precision_rule(Precision p, const kernels::CpuFeatures& cpu, const GemmImplementations& impl);

}  // namespace glassbox::runtime
