// The bf16 GEMM path (SessionOptions::precision = bf16) against the fp32
// double-accumulating reference, with a bound derived from the arithmetic, not
// fitted to the results:
//   A and B are rounded to bfloat16 (8 significant bits, round to nearest even):
//   a' = a(1 + d1), b' = b(1 + d2), |d| <= u = 2^-8, so a'b' = ab(1 + e), |e| <= 2u + u^2
//   (the product of two 8-bit significands is exact in fp32). The K products are summed
//   in fp32 (eps = 2^-24) in any order: at most K roundings, gamma_K = K eps / (1 - K eps).
//   |C - C_ref| <= (2u + u^2 + gamma_K (1 + u)^2) * sum_k |a_ik| |b_kj|   (+ eps |C| for a bias add)
// The same bound rejects a kernel that truncates instead of rounding (shown below on
// inputs where truncation loses a whole bf16 step), and exact cases pin the rounding mode.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/half.h"
#include "test_util.h"
#include "random_data.h"

namespace glassbox::ops::testing {
namespace {

using glassbox::testing::random_floats;

constexpr double kU = 1.0 / 256;               // bf16 unit roundoff, 2^-8
constexpr double kEps = 1.0 / (1 << 24);      // fp32 unit roundoff, 2^-24

double bf16_bound_factor(int64_t K) {
  const double gamma = K * kEps / (1 - K * kEps);
  return 2 * kU + kU * kU + gamma * (1 + kU) * (1 + kU);
}

struct Problem {
  int64_t M, N, K;
  std::vector<float> A, B, bias;  // A [M, K], B [K, N]
};

// |A| |B|: the scale of each element's rounding error.
std::vector<double> abs_product(const Problem& p) {
  std::vector<double> s(static_cast<size_t>(p.M * p.N), 0.0);
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t k = 0; k < p.K; ++k)
      for (int64_t j = 0; j < p.N; ++j)
        s[i * p.N + j] += std::fabs(double(p.A[i * p.K + k])) * std::fabs(double(p.B[k * p.N + j]));
  return s;
}

std::vector<double> reference(const Problem& p, const std::vector<float>& A, const std::vector<float>& B) {
  std::vector<double> c(static_cast<size_t>(p.M * p.N), 0.0);
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t k = 0; k < p.K; ++k)
      for (int64_t j = 0; j < p.N; ++j) c[i * p.N + j] += double(A[i * p.K + k]) * double(B[k * p.N + j]);
  if (!p.bias.empty())
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) c[i * p.N + j] += p.bias[j];
  return c;
}

// Elements of `got` outside the derived bound around the fp32 reference.
int64_t violations(const Problem& p, const std::vector<double>& got) {
  const auto ref = reference(p, p.A, p.B);
  const auto scale = abs_product(p);
  const double f = bf16_bound_factor(p.K);
  int64_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double bias_term = p.bias.empty() ? 0 : 2 * kEps * (std::fabs(ref[i]) + std::fabs(double(p.bias[i % p.N])));
    if (std::fabs(got[i] - ref[i]) > f * scale[i] + bias_term) ++bad;
  }
  return bad;
}

std::vector<double> run_bf16(const Problem& p, ThreadPool* pool) {
  auto packed = kernels::pack_gemm_b(p.K, p.N, false, p.N, p.B.data(), kernels::PackedPrecision::kBf16, pool);
  EXPECT_EQ(kernels::packed_gemm_b_precision(*packed), kernels::PackedPrecision::kBf16);
  std::vector<float> C(static_cast<size_t>(p.M * p.N), -1.f);
  kernels::GemmEpilogue ep;
  if (!p.bias.empty()) ep.bias = p.bias.data();
  kernels::gemm_f32_packed(p.M, p.A.data(), p.K, *packed, C.data(), p.N, ep, pool);
  return std::vector<double>(C.begin(), C.end());
}

Problem random_problem(int64_t M, int64_t N, int64_t K, bool bias, uint32_t seed) {
  Problem p{M, N, K, random_floats(static_cast<size_t>(M * K), seed, -1.f, 1.f),
            random_floats(static_cast<size_t>(K * N), seed + 1, -1.f, 1.f), {}};
  if (bias) p.bias = random_floats(static_cast<size_t>(N), seed + 2, -1.f, 1.f);
  return p;
}

TEST(Bf16Gemm, PackedWithinDerivedBoundOnAwkwardShapes) {
  struct Case {
    int64_t M, N, K;
    bool bias;
  };
  const Case cases[] = {{1, 7, 3, false}, {37, 130, 300, false}, {129, 257, 65, true}, {300, 64, 768, true}};
  uint32_t seed = 7;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (const auto& c : cases) {
      const Problem p = random_problem(c.M, c.N, c.K, c.bias, seed += 3);
      const auto got = run_bf16(p, &pool);
      EXPECT_EQ(violations(p, got), 0) << c.M << "x" << c.N << "x" << c.K << " threads " << threads;
      // It did round: bf16 results are not the fp32 ones (fp32 would sit ~1e-7 away).
      const auto ref = reference(p, p.A, p.B);
      double max_diff = 0;
      for (size_t i = 0; i < ref.size(); ++i) max_diff = std::max(max_diff, std::fabs(got[i] - ref[i]));
      if (c.K >= 64) {
        EXPECT_GT(max_diff, 1e-4) << "results look like fp32, not bf16";
      }
    }
  }
}

// 1 + 2^-8 lies halfway between the bf16 neighbours 1 and 1 + 2^-7: round to nearest
// even gives 1, so sum_k a'b' is exactly K. fp32 would give K (1 + 2^-7 + 2^-16).
TEST(Bf16Gemm, RoundsToNearestEven) {
  const int64_t M = 4, N = 64, K = 96;
  const float tie = 1.f + 1.f / 256;
  Problem p{M, N, K, std::vector<float>(M * K, tie), std::vector<float>(K * N, tie), {}};
  ThreadPool pool(2);
  for (double v : run_bf16(p, &pool)) ASSERT_EQ(v, double(K));
}

// Values just below 1 + 2^-7 round up to it; a truncating conversion drops them to 1,
// an error of 2^-7 per operand: twice the derived bound. The bound accepts the real
// kernel and rejects the truncating one on the same inputs.
TEST(Bf16Gemm, BoundRejectsATruncatingKernel) {
  const int64_t M = 8, N = 64, K = 200;
  const float x = 1.f + 1.f / 128 - 1.f / (1 << 20);
  Problem p{M, N, K, std::vector<float>(M * K, x), std::vector<float>(K * N, x), {}};
  ThreadPool pool(2);
  EXPECT_EQ(violations(p, run_bf16(p, &pool)), 0);
  auto truncate = [](std::vector<float> v) {
    for (float& f : v) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      b &= 0xffff0000u;
      std::memcpy(&f, &b, 4);
    }
    return v;
  };
  const auto wrong = reference(p, truncate(p.A), truncate(p.B));
  EXPECT_EQ(violations(p, wrong), M * N) << "the bound is too loose to tell truncation from rounding";
}

// The activation conversion gives half.h's bits (round to nearest even, NaN quiet),
// with denormal inputs read as signed zero as the AVX512-BF16 instruction does.
TEST(Bf16Gemm, ConversionMatchesScalarRule) {
  std::vector<float> v = random_floats(4099, 3, -1e4f, 1e4f);
  const float specials[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.3895314e38f, 1.f + 1.f / 256,
                            1.f + 3.f / 256};
  v.insert(v.begin(), std::begin(specials), std::end(specials));
  std::vector<uint16_t> out(v.size());
  kernels::convert_f32_to_bf16(v.data(), out.data(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    if (std::isnan(v[i])) {
      EXPECT_EQ(out[i] & 0x7f80u, 0x7f80u);
      EXPECT_NE(out[i] & 0x7fu, 0u) << "NaN became infinity";
      continue;
    }
    const uint16_t want = (bits & 0x7f800000u) == 0 ? static_cast<uint16_t>((bits >> 16) & 0x8000u)
                                                    : kernels::float_to_bfloat16(v[i]).bits;
    ASSERT_EQ(out[i], want) << "at " << i << " value " << v[i];
  }
  EXPECT_EQ(out[8], 0x3f80u);  // 1 + 2^-8: tie, to even (1.0)
  EXPECT_EQ(out[9], 0x3f82u);  // 1 + 3 * 2^-8: tie, to even (1 + 2^-6)
}

}  // namespace
}  // namespace glassbox::ops::testing
