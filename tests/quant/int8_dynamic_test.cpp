// Precision int8-dynamic's GEMM (kernels/gemm_int8.h: weights s8 per output column,
// activations u8 per row with a zero point, s32 sums, fp32 dequantization + epilogue):
//  1. the quantizers against the formulas written out here (scales, zero points, ties,
//     zero rows / columns, non-finite values);
//  2. the product against an emulation of the same arithmetic in plain loops (int64 sums
//     of (qa - za) * qb, then float(acc) * (sa * sb) + bias): equal up to one rounding of
//     the float epilogue (GELU: the vectorized erf's documented 1e-6 + 2e-6 relative);
//  3. the product against the fp32 product (double accumulation) within the bound derived
//     from the quantization steps, never fitted to results. Round to nearest gives
//       a~ = sa (qa - za) = a - ea, |ea| <= sa / 2;   b~ = sb qb = b - eb, |eb| <= sb / 2
//     (no clamping: the row range includes min and max, the column scale max |b|), and
//       a.b - a~.b~ = sum_k (ea b + a eb - ea eb), so
//       |C - a.b| <= sa / 2 sum_k |b_kj| + sb / 2 sum_k |a_ik| + K sa sb / 4.
//     The s32 sum is exact (|sum| <= 255 * 127 * K < 2^31). The kernel computes scales and
//     quotients a / s in float (relative error 2^-24 on values up to 255 steps: 3.1e-5 of a
//     step), so each half step carries a factor (1 + 2^-14); the float epilogue adds 4
//     roundings (2^-24 each) of |C| + |bias|. GELU is 1.13-Lipschitz (max of d/dx x Phi(x)
//     is 1.1289), so through GELU the bound is multiplied by 1.13 (+ the erf's error).
//  4. the dispatch ops use (pack_gemm_b kS8Dynamic + gemm_f32_packed), 1 and 2 threads
//     bitwise equal, trans_b and a misaligned weight view (a mapped model file).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"
#include "random_data.h"

namespace glassbox {
namespace {

constexpr double kEps = 1.0 / (1 << 24);
constexpr double kHalfStepSlack = 1.0 + 1.0 / (1 << 14);
constexpr double kGeluLipschitz = 1.13;

using glassbox::testing::random_floats;

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

TEST(Int8Dynamic, ColumnQuantizerFollowsTheFormula) {
  // B [K=3, N=4]; column 0: max |b| = 1.27 -> scale 0.01; column 1 zeros; column 2 a NaN; column 3 ties.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> B = {1.27f, 0.f, 1.f, 127.f,  //
                                -0.005f, 0.f, nan, 0.5f,  //
                                0.634f, 0.f, 2.f, 1.5f};
  std::vector<int8_t> q(12, 99);
  std::vector<float> s(4);
  kernels::quantize_columns_s8(3, 4, false, 4, B.data(), q.data(), s.data());
  EXPECT_FLOAT_EQ(s[0], 1.27f / 127.f);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[4], static_cast<int8_t>(std::nearbyint(-0.005f / s[0])));
  EXPECT_EQ(q[8], static_cast<int8_t>(std::nearbyint(0.634f / s[0])));
  EXPECT_EQ(s[1], 0.f);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[5], 0);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], 1.f);  // 127 / 127
  EXPECT_EQ(q[3], 127);
  EXPECT_EQ(q[7], 0);  // 0.5 ties to even
  EXPECT_EQ(q[11], 2);  // 1.5 ties to even
  // trans_b: the same matrix stored [N, K] gives the same quantization.
  std::vector<float> Bt(12);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) Bt[j * 3 + k] = B[k * 4 + j];
  std::vector<int8_t> qt(12, 99);
  std::vector<float> st(4);
  kernels::quantize_columns_s8(3, 4, true, 3, Bt.data(), qt.data(), st.data());
  EXPECT_EQ(qt, q);
  EXPECT_EQ(std::memcmp(st.data(), s.data(), sizeof(float) * 4), 0);
}

TEST(Int8Dynamic, RowQuantizerIsDynamicQuantizeLinearPerRow) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: range [-1, 2.06] -> scale 3.06 / 255 = 0.012, zp round(1 / 0.012) = 83; row 1 zeros;
  // row 2 positive only (min clamps to 0: zp 0); row 3 an infinity.
  const std::vector<float> A = {-1.f, 2.06f, 0.5f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.3f, 2.55f, 1.f, 0.f, 1.f, inf, 0.f, 2.f};
  std::vector<uint8_t> q(16);
  std::vector<float> s(4);
  std::vector<int32_t> z(4);
  kernels::quantize_rows_u8(4, 4, A.data(), 4, q.data(), s.data(), z.data());
  const float s0 = (2.06f - -1.f) / 255.f;
  EXPECT_EQ(s[0], s0);
  EXPECT_EQ(z[0], static_cast<int32_t>(std::nearbyint(1.f / s0)));
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 255);
  EXPECT_EQ(q[2], static_cast<uint8_t>(std::nearbyint(0.5f / s0) + z[0]));
  EXPECT_EQ(q[3], z[0]);  // zero is exact
  EXPECT_EQ(s[1], 1.f);
  EXPECT_EQ(z[1], 0);
  EXPECT_EQ(z[2], 0);
  EXPECT_EQ(s[2], 2.55f / 255.f);
  EXPECT_EQ(q[9], 255);
  EXPECT_TRUE(std::isnan(s[3]));
}

struct Problem {
  int64_t M, N, K;
  bool trans_b, bias, gelu, residual;
};

struct Data {
  std::vector<float> A, B, bias, residual;  // B stored [K, N] or [N, K] (trans_b)
  float b(const Problem& p, int64_t k, int64_t j) const { return p.trans_b ? B[j * p.K + k] : B[k * p.N + j]; }
};

Data make_data(const Problem& p, uint32_t seed) {
  Data d;
  d.A = random_floats(p.M * p.K, seed, -2.f, 3.f);
  for (int64_t i = 0; i < p.M; i += 5)  // some rows skewed positive, as after GELU
    for (int64_t k = 0; k < p.K; ++k) d.A[i * p.K + k] = std::fabs(d.A[i * p.K + k]) - 0.17f;
  d.B = random_floats(p.K * p.N, seed + 1, -0.08f, 0.08f);
  if (p.bias) d.bias = random_floats(p.N, seed + 2, -1.f, 1.f);
  if (p.residual) d.residual = random_floats(p.M * p.N, seed + 3, -4.f, 4.f);
  return d;
}

kernels::GemmEpilogue epilogue_of(const Problem& p, const Data& d) {
  kernels::GemmEpilogue ep;
  if (p.bias) ep.bias = d.bias.data();
  if (p.gelu) ep.activation = kernels::GemmActivation::kGeluErf;
  if (p.residual) {
    ep.residual = d.residual.data();
    ep.ld_residual = p.N;
  }
  return ep;
}

std::vector<float> run_packed(const Problem& p, const Data& d, ThreadPool* pool, bool misaligned = false) {
  // A misaligned copy of B stands for weights viewed in a mapped model file.
  std::vector<char> bytes(d.B.size() * sizeof(float) + 1);
  const char* src = reinterpret_cast<const char*>(d.B.data());
  if (misaligned) {
    std::memcpy(bytes.data() + 1, d.B.data(), d.B.size() * sizeof(float));
    src = bytes.data() + 1;
  }
  auto packed = kernels::pack_gemm_b(p.K, p.N, p.trans_b, p.trans_b ? p.K : p.N, src,
                                     kernels::PackedPrecision::kS8Dynamic, pool);
  EXPECT_EQ(kernels::packed_gemm_b_precision(*packed), kernels::PackedPrecision::kS8Dynamic);
  std::vector<float> C(p.M * p.N, -7.f);
  kernels::gemm_f32_packed(p.M, d.A.data(), p.K, *packed, C.data(), p.N, epilogue_of(p, d), pool);
  return C;
}

const std::vector<Problem> kProblems = {
    {1, 1, 1, false, false, false, false},  {7, 130, 200, false, true, false, false}, {37, 96, 768, true, true, true, false},
    {300, 70, 64, false, true, false, true}, {128, 256, 768, false, true, true, true}, {5, 64, 3072, true, false, false, true}};

std::string name_of(const Problem& p) {
  return "M " + std::to_string(p.M) + " N " + std::to_string(p.N) + " K " + std::to_string(p.K) +
         (p.trans_b ? " transB" : "") + (p.bias ? " bias" : "") + (p.gelu ? " gelu" : "") + (p.residual ? " residual" : "");
}

// check(p, d, got) for every problem, its seeded data and the packed product on two threads.
template <class Check>
void for_each_product(uint32_t seed, const Check& check) {
  ThreadPool pool(2);
  for (const auto& p : kProblems) {
    SCOPED_TRACE(name_of(p));
    const Data d = make_data(p, seed);
    check(p, d, run_packed(p, d, &pool));
  }
}

TEST(Int8Dynamic, ProductEqualsEmulatedArithmetic) {
  for_each_product(11, [](const Problem& p, const Data& d, const std::vector<float>& got) {
    std::vector<uint8_t> qa(p.M * p.K);
    std::vector<float> sa(p.M), sb(p.N);
    std::vector<int32_t> za(p.M);
    std::vector<int8_t> qb(p.K * p.N);
    kernels::quantize_rows_u8(p.M, p.K, d.A.data(), p.K, qa.data(), sa.data(), za.data());
    kernels::quantize_columns_s8(p.K, p.N, p.trans_b, p.trans_b ? p.K : p.N, d.B.data(), qb.data(), sb.data());
    int64_t bad = 0;
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) {
        int64_t acc = 0;
        for (int64_t k = 0; k < p.K; ++k) acc += (int64_t{qa[i * p.K + k]} - za[i]) * qb[k * p.N + j];
        float v = static_cast<float>(acc) * (sa[i] * sb[j]);
        if (p.bias) v += d.bias[j];
        // One rounding of the product and one of the bias add may differ (an FMA, say).
        double want = v, tol = 2 * kEps * (std::fabs(want) + (p.bias ? std::fabs(d.bias[j]) : 0.0));
        if (p.gelu) {
          want = gelu(v);
          tol = kGeluLipschitz * tol + 1e-6 + 2e-6 * std::fabs(want);
        }
        if (p.residual) {
          want += d.residual[i * p.N + j];
          tol += 2 * kEps * (std::fabs(want) + std::fabs(d.residual[i * p.N + j]));
        }
        if (!(std::fabs(got[i * p.N + j] - want) <= tol)) ++bad;
      }
    EXPECT_EQ(bad, 0);
  });
}

TEST(Int8Dynamic, ProductWithinTheQuantizationBoundOfFp32) {
  for_each_product(23, [](const Problem& p, const Data& d, const std::vector<float>& got) {
    // The scales from their definitions (not from the kernel's quantizers).
    std::vector<double> sa(p.M), sb(p.N), sum_a(p.M, 0), sum_b(p.N, 0);
    for (int64_t i = 0; i < p.M; ++i) {
      float lo = 0, hi = 0;
      for (int64_t k = 0; k < p.K; ++k) {
        lo = std::min(lo, d.A[i * p.K + k]);
        hi = std::max(hi, d.A[i * p.K + k]);
        sum_a[i] += std::fabs(d.A[i * p.K + k]);
      }
      sa[i] = hi > lo ? (double(hi) - lo) / 255 : 1.0;
    }
    for (int64_t j = 0; j < p.N; ++j) {
      double amax = 0;
      for (int64_t k = 0; k < p.K; ++k) {
        amax = std::max(amax, std::fabs(double(d.b(p, k, j))));
        sum_b[j] += std::fabs(d.b(p, k, j));
      }
      sb[j] = amax / 127;
    }
    int64_t bad = 0;
    double worst = 0, max_err = 0;
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < p.K; ++k) ref += double(d.A[i * p.K + k]) * d.b(p, k, j);
        const double bias = p.bias ? d.bias[j] : 0.0;
        ref += bias;
        double bound = kHalfStepSlack * (sb[j] / 2 * sum_a[i] + sa[i] / 2 * sum_b[j]) +
                       kHalfStepSlack * kHalfStepSlack * p.K * sa[i] * sb[j] / 4;
        bound += 4 * kEps * (std::fabs(ref) + bound + std::fabs(bias));
        if (p.gelu) {
          ref = gelu(ref);
          bound = kGeluLipschitz * bound + 1e-6 + 2e-6 * (std::fabs(ref) + bound);
        }
        if (p.residual) {
          ref += d.residual[i * p.N + j];
          bound += 2 * kEps * (std::fabs(ref) + bound);
        }
        const double err = std::fabs(got[i * p.N + j] - ref);
        if (!(err <= bound)) ++bad;
        worst = std::max(worst, err / bound);
        max_err = std::max(max_err, err);
      }
    EXPECT_EQ(bad, 0) << "worst error / bound " << worst;
    if (p.K > 1) {
      EXPECT_GT(max_err, 1e-5) << "no quantization error at all: is this the fp32 path?";
    }
    std::printf("%s: max error %.3g, worst error / bound %.3f\n", name_of(p).c_str(), max_err, worst);
  });
}

TEST(Int8Dynamic, ThreadsAndMisalignedWeightsGiveTheSameBits) {
  ThreadPool one(1), two(2);
  for (const auto& p : kProblems) {
    SCOPED_TRACE(name_of(p));
    const Data d = make_data(p, 5);
    const auto a = run_packed(p, d, &one);
    const auto b = run_packed(p, d, &two);
    const auto c = run_packed(p, d, &two, /*misaligned=*/true);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)), 0);
  }
}

TEST(Int8Dynamic, NonFiniteValuesGiveNaNWhereFp32WouldNotBeFinite) {
  ThreadPool pool(2);
  const Problem p{3, 64, 8, false, false, false, false};
  Data d = make_data(p, 3);
  d.B[2 * p.N + 5] = std::numeric_limits<float>::quiet_NaN();  // column 5
  d.A[1 * p.K + 3] = std::numeric_limits<float>::infinity();    // row 1
  const auto C = run_packed(p, d, &pool);
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t j = 0; j < p.N; ++j) {
      const bool expect_nan = i == 1 || j == 5;
      EXPECT_EQ(std::isnan(C[i * p.N + j]), expect_nan) << i << "," << j;
    }
}

TEST(Int8Dynamic, ImplementationIsNamed) {
  const std::string name = kernels::gemm_u8s8_implementation();
  EXPECT_FALSE(name.empty());
  if (kernels::gemm_u8s8_fast_available()) {
    EXPECT_EQ(name.find("ref"), std::string::npos) << name;
  }
  std::printf("u8 x s8 implementation: %s\n", name.c_str());
}

}  // namespace
}  // namespace glassbox
