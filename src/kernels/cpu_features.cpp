#include "kernels/cpu_features.h"

#include <cpuid.h>

#include <cstring>

namespace glassbox::kernels {
namespace {

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
  return f;
}

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
      {f.amx_bf16, "amx_bf16"}};
  for (const auto& [has, name] : all)
    if (has) out.push_back(name);
  return out;
}

}  // namespace glassbox::kernels
