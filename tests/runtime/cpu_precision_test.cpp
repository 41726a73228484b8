// The precision rule on other CPUs (runtime::precision_rule over described CPUs: an AVX2-only
// EPYC, an SSE4.2-only Nehalem, an AVX-512 CPU without BF16, one with it), the CPU report, and
// the no-abort path: oneDNN refusing a bf16 product (its ISA capped at AVX2, as on such a CPU)
// reaches the caller as a KernelError naming the call, the CPU and the way out — never
// std::terminate — and a chunk's exception on the thread pool is rethrown on the calling thread.
// The same binary on real other CPU models: tests/portability (qemu-x86_64).
#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "core/thread_pool.h"
#include "glassbox/cpu.h"
#include "glassbox/session.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"
#include "kernels/kernel_error.h"
#include "runtime/cpu_info.h"

namespace glassbox {
namespace {

kernels::CpuFeatures nehalem() {
  kernels::CpuFeatures f;
  f.vendor = "GenuineIntel";
  f.sse4_1 = f.sse4_2 = true;
  return f;
}

kernels::CpuFeatures epyc_rome() {
  kernels::CpuFeatures f = nehalem();
  f.vendor = "AuthenticAMD";
  f.avx = f.avx2 = f.fma = f.f16c = true;
  return f;
}

kernels::CpuFeatures cascade_lake() {  // AVX-512 with VNNI, no BF16
  kernels::CpuFeatures f = epyc_rome();
  f.vendor = "GenuineIntel";
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.avx512vnni = true;
  return f;
}

kernels::CpuFeatures cooper_lake() {
  kernels::CpuFeatures f = cascade_lake();
  f.avx512bf16 = true;
  return f;
}

const runtime::GemmImplementations kImpl{"gemm:jit", "brg:avx512_core_bf16", "brg:avx512_core_vnni"};

TEST(PrecisionRule, Bf16IsRefusedWithoutNativeBf16NamingFeaturesAndAlternatives) {
  for (const auto& cpu : {nehalem(), epyc_rome(), cascade_lake()}) {
    const PrecisionOnCpu r = runtime::precision_rule(Precision::kBf16, cpu, kImpl);
    EXPECT_FALSE(r.runs) << cpu.vendor;
    EXPECT_NE(r.how.find("AVX512_BF16"), std::string::npos) << r.how;
    EXPECT_NE(r.how.find("AMX_BF16"), std::string::npos) << r.how;
    EXPECT_NE(r.how.find(cpu.vendor), std::string::npos) << r.how;
    EXPECT_NE(r.fix.find("--precision fp32"), std::string::npos) << r.fix;
    EXPECT_NE(r.fix.find("int8-dynamic"), std::string::npos) << r.fix;
  }
  // What the CPU has is named, so the user sees why.
  EXPECT_NE(runtime::precision_rule(Precision::kBf16, epyc_rome(), kImpl).how.find("avx2 fma"), std::string::npos);
  EXPECT_NE(runtime::precision_rule(Precision::kBf16, nehalem(), kImpl).how.find("has sse4.1 sse4.2"), std::string::npos);
  EXPECT_EQ(runtime::precision_rule(Precision::kBf16, nehalem(), kImpl).how.find("avx"), std::string::npos);
}

TEST(PrecisionRule, Bf16RunsOnNativeBf16UnlessOneDnnOffersOnlyAReferenceKernel) {
  const PrecisionOnCpu ok = runtime::precision_rule(Precision::kBf16, cooper_lake(), kImpl);
  EXPECT_TRUE(ok.runs);
  EXPECT_NE(ok.how.find("brg:avx512_core_bf16"), std::string::npos) << ok.how;
  kernels::CpuFeatures amx = epyc_rome();
  amx.amx_tile = amx.amx_bf16 = true;
  EXPECT_TRUE(runtime::precision_rule(Precision::kBf16, amx, kImpl).runs);
  for (const char* impl : {"ref:any", "none (oneDNN: could not create a primitive descriptor iterator)"}) {
    const PrecisionOnCpu r = runtime::precision_rule(Precision::kBf16, cooper_lake(), {"gemm:jit", impl, "x"});
    EXPECT_FALSE(r.runs) << impl;
    EXPECT_NE(r.how.find(impl), std::string::npos) << r.how;
  }
}

TEST(PrecisionRule, Fp32AndInt8RunEverywhereAndSayWhichKernel) {
  for (const auto& cpu : {nehalem(), epyc_rome(), cascade_lake(), cooper_lake()}) {
    EXPECT_TRUE(runtime::precision_rule(Precision::kFp32, cpu, kImpl).runs);
    EXPECT_TRUE(runtime::precision_rule(Precision::kInt8Dynamic, cpu, kImpl).runs);
  }
  EXPECT_NE(runtime::precision_rule(Precision::kInt8Dynamic, epyc_rome(), kImpl).how.find("reference loops"),
            std::string::npos);
  EXPECT_NE(runtime::precision_rule(Precision::kInt8Dynamic, cascade_lake(), kImpl).how.find("brg:avx512_core_vnni"),
            std::string::npos);
}

kernels::CpuFeatures graviton3() {  // Neoverse V1: NEON, SVE, BF16, I8MM (what getauxval reports there)
  kernels::CpuFeatures f;
  f.arch = "aarch64";
  f.vendor = "aarch64 ARM (MIDR implementer 0x41, part 0xd40)";
  f.asimd = f.fphp = f.asimddp = f.sve = f.arm_bf16 = f.i8mm = true;
  return f;
}

// The declared rule on ARM (docs/runtime.md "Precision and the CPU"): bf16 is refused by name
// even where the CPU has FEAT_BF16 (this build has no native aarch64 bf16 matmul); fp32 and
// int8-dynamic run, int8 on the exact int32 loops; no x86 dispatch level is true.
TEST(PrecisionRule, OnAarch64Bf16IsRefusedByNameAndFp32Int8Run) {
  const kernels::CpuFeatures arm = graviton3();
  EXPECT_FALSE(arm.avx2_fma() || arm.avx512_dq_fma() || arm.int8_vnni() || arm.bf16_native());
  const PrecisionOnCpu bf16 = runtime::precision_rule(Precision::kBf16, arm, kImpl);
  EXPECT_FALSE(bf16.runs);
  EXPECT_NE(bf16.how.find("aarch64"), std::string::npos) << bf16.how;
  EXPECT_NE(bf16.how.find("asimd fp16 asimddp sve bf16 i8mm"), std::string::npos) << bf16.how;
  EXPECT_NE(bf16.fix.find("--precision fp32"), std::string::npos) << bf16.fix;
  EXPECT_TRUE(runtime::precision_rule(Precision::kFp32, arm, kImpl).runs);
  const PrecisionOnCpu int8 = runtime::precision_rule(Precision::kInt8Dynamic, arm, kImpl);
  EXPECT_TRUE(int8.runs);
  EXPECT_NE(int8.how.find("exact int32 reference loops"), std::string::npos) << int8.how;
}

TEST(CpuReport, ListsFeaturesKernelsAndAVerdictPerPrecision) {
  const CpuReport& r = cpu_report();
  EXPECT_FALSE(r.vendor.empty());
  EXPECT_NE(r.onednn.find("oneDNN"), std::string::npos);
  ASSERT_GE(r.kernels.size(), 6u);
  EXPECT_EQ(r.kernels[0].op_class.rfind("GEMM fp32", 0), 0u);
  for (const auto& k : r.kernels) {
    EXPECT_FALSE(k.kernel.empty()) << k.op_class;
    EXPECT_FALSE(k.speed.empty()) << k.op_class;
  }
  ASSERT_EQ(r.precisions.size(), 3u);
  EXPECT_TRUE(r.precisions[0].runs);  // fp32
  EXPECT_TRUE(r.precisions[2].runs);  // int8-dynamic
  // The rule reads the same features as the kernels' dispatch.
  EXPECT_EQ(r.precisions[1].runs, kernels::cpu_features().bf16_native() && precision_on_cpu(Precision::kBf16).runs);
}

TEST(KernelError, ChunkExceptionIsRethrownOnTheCallerAndThePoolStaysUsable) {
  ThreadPool pool(2);
  std::atomic<int64_t> ran{0};
  EXPECT_THROW(kernels::parallel_for_rethrow(pool, 64, 1,
                                             [&](int64_t i0, int64_t i1) {
                                               ran += i1 - i0;
                                               if (i0 <= 5 && 5 < i1) throw kernels::KernelError("chunk 5", "fix");
                                             }),
               kernels::KernelError);
  std::atomic<int64_t> all{0};
  kernels::parallel_for_rethrow(pool, 64, 1, [&](int64_t i0, int64_t i1) { all += i1 - i0; });
  EXPECT_EQ(all.load(), 64);
}

// oneDNN with its ISA capped at AVX2 has no bf16 matmul, as on an AVX2-only CPU. The cap must
// be set before oneDNN's first primitive in the process: ctest runs each test in its own process.
TEST(KernelError, OneDnnRefusingBf16IsAKernelErrorAndTheRuleRefusesAtLoad) {
  if (dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2) != dnnl_success)
    GTEST_SKIP() << "oneDNN already dispatched in this process: run this test alone (ctest does)";
  std::vector<float> w(64 * 32, 0.5f);
  try {
    auto packed = kernels::pack_gemm_b(64, 32, false, 32, w.data(), kernels::PackedPrecision::kBf16, nullptr);
    FAIL() << "a bf16 packing succeeded with oneDNN capped at AVX2";
  } catch (const kernels::KernelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("oneDNN matmul weights layout"), std::string::npos) << what;
    EXPECT_NE(what.find("bf16[64,32]"), std::string::npos) << what;
    EXPECT_NE(what.find("this CPU has:"), std::string::npos) << what;
    EXPECT_NE(e.fix().find("--precision fp32"), std::string::npos) << e.fix();
  }
  // The rule asks oneDNN too: where it has no native bf16 matmul, load refuses bf16.
  const PrecisionOnCpu bf16 = precision_on_cpu(Precision::kBf16);
  EXPECT_FALSE(bf16.runs);
  // fp32 still packs and multiplies.
  auto f32 = kernels::pack_gemm_b(64, 32, false, 32, w.data(), kernels::PackedPrecision::kF32, nullptr);
  std::vector<float> a(3 * 64, 1.f), c(3 * 32, 0.f);
  kernels::gemm_f32_packed(3, a.data(), 64, *f32, c.data(), 32, {}, nullptr);
  EXPECT_EQ(c[0], 32.f);
  // int8-dynamic stays exact: oneDNN's AVX2 u8 x s8 path saturates int16 pair sums (255 * 127 * 2
  // > 32767), so with oneDNN held below VNNI the kernels take the reference loops even on a VNNI
  // CPU. Exact: 64 products of 255 * 127 (a = 1 -> 255, w = 0.5 -> 127), scaled back to 32.
  EXPECT_FALSE(kernels::gemm_u8s8_fast_available());
  auto s8 = kernels::pack_gemm_b(64, 32, false, 32, w.data(), kernels::PackedPrecision::kS8Dynamic, nullptr);
  kernels::gemm_f32_packed(3, a.data(), 64, *s8, c.data(), 32, {}, nullptr);
  for (float v : c) EXPECT_NEAR(v, 32.f, 1e-4f);
}

}  // namespace
}  // namespace glassbox
