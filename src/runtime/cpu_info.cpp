// physical_core_count: distinct (package, core) pairs in /proc/cpuinfo, so
// hyperthread siblings count once. Falls back to hardware_concurrency.
// cpu_report / precision_on_cpu: the kernels' CPU features and dispatch, and the precision rule.
#include "runtime/cpu_info.h"

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "glassbox/session.h"
#include "glassbox/cpu.h"
#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"

namespace glassbox {

int physical_core_count() {
  static const int cores = [] {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::pair<std::string, std::string>> seen;
    std::string line, physical = "0";
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
      std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      if (key == "physical id") physical = value;
      else if (key == "core id") seen.emplace(physical, value);
    }
    int n = static_cast<int>(seen.size());
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    return n > 0 ? n : 1;
  }();
  return cores;
}

// ---- CPU features, kernel families and the precision rule (include/glassbox/cpu.h) ----

namespace runtime {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s.empty() ? "no vector extension beyond SSE2" : s;
}

// oneDNN names its reference implementations "ref:any", "gemm:ref", ...: not native.
bool native_impl(const std::string& impl) { return impl.rfind("none", 0) != 0 && impl.find("ref") == std::string::npos; }

}  // namespace

PrecisionOnCpu precision_rule(Precision p, const kernels::CpuFeatures& cpu, const GemmImplementations& impl) {
  PrecisionOnCpu r;
  r.precision = p;
  switch (p) {
    case Precision::kFp32:
      r.how = "oneDNN matmul " + impl.fp32 + (cpu.arch == "aarch64" ? " (every aarch64 CPU)" : " (every x86-64 CPU)");
      return r;
    case Precision::kInt8Dynamic:
      if (cpu.arch == "aarch64") r.how = "exact int32 reference loops (aarch64: the fast int8 path is x86 VNNI only: slow)";
      else if (!cpu.int8_vnni()) r.how = "exact int32 reference loops (no AVX512_VNNI: slow)";
      else if (impl.u8s8.rfind("reference", 0) == 0) r.how = "exact int32 reference loops (oneDNN held below AVX512_VNNI: slow)";
      else r.how = "oneDNN matmul " + impl.u8s8 + " (AVX512_VNNI: fast)";
      return r;
    case Precision::kBf16:
      if (cpu.bf16_native() && native_impl(impl.bf16)) {
        r.how = "oneDNN matmul " + impl.bf16 + " (native bfloat16)";
        return r;
      }
      r.runs = false;
      if (cpu.arch == "aarch64") {
        // Declared rule on ARM: refused by name. glassbox's bf16 products are oneDNN's x86
        // AVX512_BF16 / AMX kernels; Debian's oneDNN for aarch64 (no Arm Compute Library) has no
        // native bf16 matmul, and an emulated one would be slower than fp32 while rounding differently.
        r.how = "precision bf16 needs a native bfloat16 matmul; on aarch64 this build has none (oneDNN's bf16 "
                "kernels are x86 AVX512_BF16 / AMX); this CPU (" + cpu.vendor + ") has " +
                joined(kernels::cpu_feature_names(cpu));
        r.fix = "use --precision fp32 (the model's own arithmetic) or int8-dynamic (exact int32 loops on aarch64, slow)";
        return r;
      }
      r.how = cpu.bf16_native()
                  ? "precision bf16 needs a native bfloat16 matmul, and oneDNN offers none on this CPU (" + impl.bf16 + ")"
                  : "precision bf16 needs native bfloat16 products: AVX512_BF16 (with AVX512BW/DQ/VL) or AMX_BF16; this "
                    "CPU (" + cpu.vendor + ") has " + joined(kernels::cpu_feature_names(cpu));
      r.fix = "use --precision fp32 (the model's own arithmetic) or int8-dynamic (every x86-64 CPU; fast with "
              "AVX512_VNNI" + std::string(cpu.int8_vnni() ? ", which this CPU has)" : ", which this CPU lacks)");
      return r;
  }
  return r;
}

}  // namespace runtime

PrecisionOnCpu precision_on_cpu(Precision p) {
  // Only the probe the precision needs (each creates a oneDNN primitive once per process).
  runtime::GemmImplementations impl;
  if (p == Precision::kFp32) impl.fp32 = kernels::gemm_f32_implementation();
  if (p == Precision::kBf16 && kernels::cpu_features().bf16_native()) impl.bf16 = kernels::gemm_bf16_implementation();
  if (p == Precision::kInt8Dynamic) impl.u8s8 = kernels::gemm_u8s8_implementation();
  return runtime::precision_rule(p, kernels::cpu_features(), impl);
}

const CpuReport& cpu_report() {
  static const CpuReport report = [] {
    CpuReport r;
    const kernels::CpuFeatures& f = kernels::cpu_features();
    r.vendor = f.vendor;
    r.features = kernels::cpu_feature_names(f);
    r.onednn = kernels::onednn_description();
    for (auto& k : kernels::kernel_families()) r.kernels.push_back({std::move(k.op_class), std::move(k.kernel), std::move(k.speed)});
    for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic}) r.precisions.push_back(precision_on_cpu(p));
    return r;
  }();
  return report;
}

}  // namespace glassbox
