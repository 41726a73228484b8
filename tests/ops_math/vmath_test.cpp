// Vectorized float32 math (AVX2 when available) vs libm, fixed seed, odd lengths
// (tail handling), special values.
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/vmath.h"
#include "test_util.h"

namespace glassbox::kernels::x86 {  // src/kernels/x86/vmath_{avx2,avx512}.cpp
bool avx2_available();
bool avx512_available();
void vexp_f32_avx2(const float* x, float* y, int64_t n);
void verf_f32_avx2(const float* x, float* y, int64_t n);
void vexp_f32_avx512(const float* x, float* y, int64_t n);
void verf_f32_avx512(const float* x, float* y, int64_t n);
void vgelu_erf_f32_avx512(const float* x, float* y, int64_t n);
}  // namespace glassbox::kernels::x86

namespace glassbox::ops::testing {
namespace {

TEST(VMath, MatchesLibm) {
  using Fn = void (*)(const float*, float*, int64_t);
  struct Case { const char* name; Fn fast, ref; float lo, hi, rtol, atol; };
  const Case cases[] = {
      {"exp", kernels::vexp_f32, kernels::vexp_f32_reference, -87, 88, 3e-7f, 0},
      {"tanh", kernels::vtanh_f32, kernels::vtanh_f32_reference, -10, 10, 2e-6f, 1e-7f},
      {"erf", kernels::verf_f32, kernels::verf_f32_reference, -5, 5, 2e-6f, 3e-7f},
      {"sigmoid", kernels::vsigmoid_f32, kernels::vsigmoid_f32_reference, -30, 30, 1e-6f, 1e-7f},
  };
  for (const auto& c : cases)
    for (int64_t n : {0, 1, 7, 8, 9, 1000, 4099}) {
      Tensor x = random_f32({n}, static_cast<uint32_t>(n) + 1, c.lo, c.hi);
      std::vector<float> got(n), want(n);
      c.fast(x.data<float>(), got.data(), n);
      c.ref(x.data<float>(), want.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[i], want[i], c.atol + c.rtol * std::fabs(want[i])) << c.name << " x=" << x.data<float>()[i];
    }
  const float special[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 100.f, -100.f};
  for (const auto& c : cases) {
    float got[9], want[9];
    c.fast(special, got, 9);
    c.ref(special, want, 9);
    for (int i = 0; i < 9; ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << c.name << " " << special[i];
        continue;
      }
      if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << c.name;
        continue;
      }
      EXPECT_NEAR(got[i], want[i], 1e-6f + 1e-6f * std::fabs(want[i])) << c.name << " x=" << special[i];
    }
  }
}

// The AVX-512 exp / erf are the AVX2 operations on 16 lanes: equal bit for bit (NaN for NaN),
// over a wide range, the special values and every tail length.
TEST(VMath, Avx512MatchesAvx2) {
  if (!kernels::x86::avx2_available() || !kernels::x86::avx512_available()) GTEST_SKIP() << "CPU lacks AVX2 or AVX-512";
  using Fn = void (*)(const float*, float*, int64_t);
  const std::pair<Fn, Fn> fns[] = {{kernels::x86::vexp_f32_avx512, kernels::x86::vexp_f32_avx2},
                                   {kernels::x86::verf_f32_avx512, kernels::x86::verf_f32_avx2}};
  Tensor x = random_f32({4099}, 17, -100, 100);
  std::vector<float> in(x.data<float>(), x.data<float>() + 4099);
  const float special[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 0.5f, -0.5f, 88.4f, -87.4f, 3.f};
  in.insert(in.begin(), std::begin(special), std::end(special));
  for (const auto& [fast, ref] : fns)
    for (int64_t n : std::initializer_list<int64_t>{1, 7, 15, 16, 17, 31, static_cast<int64_t>(in.size())}) {
      std::vector<float> got(n), want(n);
      fast(in.data(), got.data(), n);
      ref(in.data(), want.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << "x=" << in[i];
          continue;
        }
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << "x=" << in[i] << " n=" << n;
      }
    }
}

// The AVX-512 GELU equals the loops it replaced (x / sqrt 2 in scalar, verf_f32_avx512, then
// 0.5 x (1 + t) in scalar) bit for bit, in place too, for every tail length.
TEST(VMath, GeluAvx512MatchesScalarAroundErf) {
  if (!kernels::x86::avx512_available()) GTEST_SKIP() << "CPU lacks AVX-512";
  Tensor x = random_f32({4099}, 23, -12, 12);
  std::vector<float> in(x.data<float>(), x.data<float>() + 4099);
  const float special[] = {0.f, -0.f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 0.7f, -0.7f, 130.f, -130.f, 3.f};
  in.insert(in.begin(), std::begin(special), std::end(special));
  for (int64_t n : std::initializer_list<int64_t>{1, 7, 15, 16, 17, 31, static_cast<int64_t>(in.size())}) {
    std::vector<float> t(n), want(n), got(in.begin(), in.begin() + n);
    for (int64_t i = 0; i < n; ++i) t[i] = in[i] * 0.70710678118654752f;
    kernels::x86::verf_f32_avx512(t.data(), t.data(), n);
    for (int64_t i = 0; i < n; ++i) want[i] = 0.5f * in[i] * (1.f + t[i]);
    kernels::x86::vgelu_erf_f32_avx512(got.data(), got.data(), n);  // in place, as the GEMM epilogues call it
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "x=" << in[i];
        continue;
      }
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << "x=" << in[i] << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace glassbox::ops::testing
