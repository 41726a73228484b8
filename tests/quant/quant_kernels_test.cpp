// The int8 kernels against independent references:
//  - gemm_u8s8_packed (oneDNN u8 x s8 tiles + zero-point compensation by column / row
//    sums) against gemm_integer_reference (plain int32 loops): bit-exact int32, and the
//    float epilogue bit-exact against float(acc) * scale[j] + bias[j] in that order;
//    shapes with a single row, odd sizes, more rows than a row block (256), K large enough
//    that the raw u8 x s8 sums overflow int16 (a saturating dot product would show),
//    extreme values (0/255, -128/127) and zero points scalar / per row / per column.
//  - minmax_f32 / quantize_f32_u8 against the ONNX formula written out here: exact ties
//    (x / scale = k + 0.5, round half to even), saturation both ways, NaN, infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_int8.h"
#include "kernels/quantize.h"

namespace glassbox {
namespace {

struct Case {
  int64_t M, N, K;
  int zp_kind;  // 0: none, 1: scalar a_zp, 2: per-row a_zp + per-column b_zp
  int values;   // 0: random, 1: extremes (255 x -128 / 127)
};

TEST(QuantKernels, U8S8PackedEqualsIntegerReference) {
  ThreadPool pool(2);
  std::mt19937 rng(17);
  const std::vector<Case> cases = {{1, 1, 1, 0, 0},     {1, 64, 768, 1, 0},  {7, 5, 3, 2, 0},     {17, 200, 64, 1, 1},
                                   {300, 96, 300, 2, 0}, {128, 768, 768, 1, 0}, {33, 130, 3072, 2, 1}, {5, 257, 9, 0, 1}};
  if (!kernels::gemm_u8s8_fast_available())
    std::printf("note: no AVX-512 VNNI: the packed form runs the reference loops (exactness still checked)\n");
  for (const auto& c : cases) {
    SCOPED_TRACE("M " + std::to_string(c.M) + " N " + std::to_string(c.N) + " K " + std::to_string(c.K) + " zp " +
                 std::to_string(c.zp_kind) + " values " + std::to_string(c.values));
    std::vector<uint8_t> A(c.M * c.K);
    std::vector<int8_t> B(c.K * c.N);
    for (auto& v : A) v = c.values ? (rng() % 4 ? 255 : 0) : static_cast<uint8_t>(rng());
    for (auto& v : B) v = c.values ? (rng() % 2 ? 127 : -128) : static_cast<int8_t>(rng());
    std::vector<int32_t> a_zp(c.zp_kind == 2 ? c.M : 1), b_zp(c.N, 0);
    for (auto& z : a_zp) z = c.zp_kind ? static_cast<int32_t>(rng() % 256) : 0;
    if (c.zp_kind == 2)
      for (auto& z : b_zp) z = static_cast<int32_t>(rng() % 256) - 128;
    std::vector<int32_t> want(c.M * c.N), got(c.M * c.N, -1);
    kernels::gemm_integer_reference<uint8_t, int8_t>(c.M, c.N, c.K, A.data(), c.K, a_zp.data(), c.zp_kind == 2, B.data(),
                                                     c.N, b_zp.data(), true, want.data(), c.N);
    auto packed = kernels::pack_gemm_b_s8(c.K, c.N, c.N, B.data(), &pool);
    kernels::QGemmArgs q;
    q.M = c.M;
    q.A = A.data();
    q.lda = c.K;
    q.a_zp = a_zp.data();
    q.a_zp_per_row = c.zp_kind == 2;
    q.b_zp = c.zp_kind == 2 ? b_zp.data() : nullptr;
    q.C_s32 = got.data();
    q.ldc = c.N;
    kernels::gemm_u8s8_packed(q, *packed, &pool);
    int64_t mismatches = 0;
    for (size_t i = 0; i < want.size(); ++i) mismatches += want[i] != got[i];
    EXPECT_EQ(mismatches, 0) << "first: " << want[0] << " vs " << got[0];
    // float epilogue: float(acc) * scale[j], then + bias[j]
    std::vector<float> scale(c.N), bias(c.N), fwant(c.M * c.N), fgot(c.M * c.N, -1.f);
    for (auto& s : scale) s = std::ldexp(static_cast<float>(rng() % 1000 + 1) / 997.f, -12);
    for (auto& b : bias) b = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 77.f;
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        volatile float prod = static_cast<float>(want[i * c.N + j]) * scale[j];
        fwant[i * c.N + j] = prod + bias[j];
      }
    q.C_s32 = nullptr;
    q.C_f32 = fgot.data();
    q.scale = scale.data();
    q.bias = bias.data();
    kernels::gemm_u8s8_packed(q, *packed, &pool);
    mismatches = 0;
    for (size_t i = 0; i < fwant.size(); ++i) mismatches += fwant[i] != fgot[i];
    EXPECT_EQ(mismatches, 0);
  }
}

// ONNX QuantizeLinear to uint8, written out: saturate(round_half_to_even(x / s) + zp).
uint8_t onnx_quantize(float x, float s, int32_t zp) {
  const float v = x / s;
  if (std::isnan(v)) return 0;  // ONNX Runtime's NaN: the lowest value (tests/numerics/nonfinite_peer.py checks it)
  float r = std::floor(v);
  const float frac = v - r;
  if (frac > 0.5f || (frac == 0.5f && std::fmod(r, 2.f) != 0.f)) r += 1.f;
  const double q = static_cast<double>(r) + zp;
  return static_cast<uint8_t>(q < 0 ? 0 : q > 255 ? 255 : q);
}

TEST(QuantKernels, QuantizeF32U8EqualsOnnxFormula) {
  std::mt19937 rng(5);
  const float s = 0.25f;  // a power of two: x = odd / 8 gives exact ties x / s = k + 0.5
  std::vector<float> x;
  for (int k = -1100; k <= 1100; ++k) x.push_back(static_cast<float>(k) / 8.f);
  for (int i = 0; i < 1000; ++i) x.push_back(std::uniform_real_distribution<float>(-100.f, 100.f)(rng));
  for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, -0.f})
    x.push_back(v);
  for (int32_t zp : {0, 3, 128, 255}) {
    std::vector<uint8_t> got(x.size());
    kernels::quantize_f32_u8(x.data(), static_cast<int64_t>(x.size()), s, zp, got.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(onnx_quantize(x[i], s, zp))) << "x " << x[i] << " zp " << zp;
  }
}

TEST(QuantKernels, MinMaxIncludesZeroAndIgnoresNaN) {
  std::vector<float> x(1003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.f + static_cast<float>(i % 97);
  float lo = -1, hi = -1;
  kernels::minmax_f32(x.data(), static_cast<int64_t>(x.size()), &lo, &hi);
  EXPECT_EQ(lo, 0.f);  // the range always includes 0
  EXPECT_EQ(hi, 97.f);
  x[501] = -7.5f;
  x[1002] = -8.f;  // the scalar tail
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[1001] = 200.f;
  kernels::minmax_f32(x.data(), static_cast<int64_t>(x.size()), &lo, &hi);
  EXPECT_EQ(lo, -8.f);
  EXPECT_EQ(hi, 200.f);
}

// The vector min/max (four accumulator pairs over 64-float blocks, then 16-float blocks, then
// scalars) equals a sequential scan from +0 that skips NaN, for every length up to 300 and the
// extreme values in every position class; an all-(-0) input still gives +0 (bit for bit).
TEST(QuantKernels, MinMaxEqualsSequentialScan) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(1.f, 50.f);
  for (int64_t n = 0; n <= 300; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = u(rng);
    for (int64_t at = 0; at < n; at += 7) {
      std::vector<float> y = x;
      y[static_cast<size_t>(at)] = -u(rng);
      y[static_cast<size_t>((at * 5 + 3) % n)] = 60.f + static_cast<float>(at);
      if (n > 2) y[static_cast<size_t>((at + 1) % n)] = std::numeric_limits<float>::quiet_NaN();
      float want_lo = 0.f, want_hi = 0.f;
      for (float v : y) {
        if (v < want_lo) want_lo = v;
        if (v > want_hi) want_hi = v;
      }
      float lo = -1, hi = -1;
      kernels::minmax_f32(y.data(), n, &lo, &hi);
      ASSERT_EQ(lo, want_lo) << "n " << n << " at " << at;
      ASSERT_EQ(hi, want_hi) << "n " << n << " at " << at;
    }
  }
  std::vector<float> zeros(200, -0.f);
  float lo = -1, hi = -1;
  kernels::minmax_f32(zeros.data(), 200, &lo, &hi);
  EXPECT_FALSE(std::signbit(lo));
  EXPECT_FALSE(std::signbit(hi));
}

}  // namespace
}  // namespace glassbox
