#include "kernels/cpu_features.h"

#if GLASSBOX_KERNELS_X86
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <cstdio>
#include <cstring>

namespace glassbox::kernels {
namespace {

#if GLASSBOX_KERNELS_X86

std::string vendor_string() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown";
  char v[13] = {};
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &d, 4);
  std::memcpy(v + 8, &c, 4);
  return v;
}

CpuFeatures detect() {
  __builtin_cpu_init();
  CpuFeatures f;
  f.vendor = vendor_string();
  f.sse4_1 = __builtin_cpu_supports("sse4.1");
  f.sse4_2 = __builtin_cpu_supports("sse4.2");
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  f.avxvnni = __builtin_cpu_supports("avxvnni");
  f.amx_tile = __builtin_cpu_supports("amx-tile");
  f.amx_int8 = __builtin_cpu_supports("amx-int8");
  f.amx_bf16 = __builtin_cpu_supports("amx-bf16");
  f.arch = "x86-64";
  return f;
}

#elif defined(__aarch64__)

// The implementer of MIDR_EL1 (readable from user space where the kernel sets HWCAP_CPUID,
// which traps and emulates the read), else just the architecture.
std::string arm_vendor(unsigned long hwcap) {
  if (!(hwcap & HWCAP_CPUID)) return "aarch64";
  uint64_t midr = 0;
  asm volatile("mrs %0, MIDR_EL1" : "=r"(midr));
  const unsigned implementer = static_cast<unsigned>((midr >> 24) & 0xff), part = static_cast<unsigned>((midr >> 4) & 0xfff);
  const char* name = implementer == 0x41 ? "ARM" : implementer == 0x61 ? "Apple" : implementer == 0xc0 ? "Ampere"
                     : implementer == 0x51 ? "Qualcomm" : implementer == 0x48 ? "HiSilicon" : implementer == 0x46 ? "Fujitsu"
                     : implementer == 0x4e ? "NVIDIA" : implementer == 0x00 ? "implementer 0 (emulated or reserved)"
                                           : "implementer";
  char buf[96];
  std::snprintf(buf, sizeof buf, "aarch64 %s (MIDR implementer 0x%02x, part 0x%03x)", name, implementer, part);
  return buf;
}

CpuFeatures detect() {
  CpuFeatures f;
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  f.arch = "aarch64";
  f.vendor = arm_vendor(hw);
  f.asimd = hw & HWCAP_ASIMD;
  f.fphp = (hw & HWCAP_FPHP) && (hw & HWCAP_ASIMDHP);
  f.asimddp = hw & HWCAP_ASIMDDP;
  f.sve = hw & HWCAP_SVE;
#ifdef HWCAP2_SVE2
  f.sve2 = hw2 & HWCAP2_SVE2;
#endif
#ifdef HWCAP2_BF16
  f.arm_bf16 = hw2 & HWCAP2_BF16;
#endif
#ifdef HWCAP2_I8MM
  f.i8mm = hw2 & HWCAP2_I8MM;
#endif
  (void)hw2;
  return f;
}

#else

CpuFeatures detect() {
  CpuFeatures f;
  f.vendor = "unknown";
  f.arch = "unknown architecture (no vector features detected)";
  return f;
}

#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

std::vector<std::string> cpu_feature_names(const CpuFeatures& f) {
  std::vector<std::string> out;
  const std::pair<bool, const char*> all[] = {
      {f.sse4_1, "sse4.1"},         {f.sse4_2, "sse4.2"},         {f.avx, "avx"},           {f.avx2, "avx2"},
      {f.fma, "fma"},               {f.f16c, "f16c"},             {f.avx512f, "avx512f"},   {f.avx512bw, "avx512bw"},
      {f.avx512dq, "avx512dq"},     {f.avx512vl, "avx512vl"},     {f.avx512vnni, "avx512_vnni"},
      {f.avx512bf16, "avx512_bf16"}, {f.avxvnni, "avx_vnni"},     {f.amx_tile, "amx_tile"}, {f.amx_int8, "amx_int8"},
      {f.amx_bf16, "amx_bf16"},     {f.asimd, "asimd"},           {f.fphp, "fp16"},         {f.asimddp, "asimddp"},
      {f.sve, "sve"},               {f.sve2, "sve2"},             {f.arm_bf16, "bf16"},     {f.i8mm, "i8mm"}};
  for (const auto& [has, name] : all)
    if (has) out.push_back(name);
  return out;
}

}  // namespace glassbox::kernels
