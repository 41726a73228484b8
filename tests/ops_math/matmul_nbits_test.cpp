// MatMulNBits' packed-code kernels (src/kernels/matmul_nbits.cpp, x86/matmul_nbits_x86.cpp): every
// form available on this CPU (scalar, AVX2, AVX-512) against a double-precision product computed
// here from the unpacked codes, for bits 4 and 8, block sizes 16 to 128, K not a multiple of the
// block, 1 to 9 rows of A, no / packed / float zero points, and a sub-range of weight rows.
// The ONNX Runtime comparison of the whole op is tests/generation/matmul_n_bits_peer_test.js.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/matmul_nbits.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

using kernels::NBitsForm;

struct Case {
  int64_t K, N, bits, block;
  int zp;  // 0 none, 1 packed uint8, 2 float
};

struct Packed {
  std::vector<uint8_t> codes, zp_packed;
  std::vector<float> scales, zp_float;
  std::vector<int> unpacked;  // [N, K] codes
  kernels::NBitsWeights w;
};

Packed make_weights(const Case& c, std::mt19937& rng) {
  Packed p;
  const int64_t kb = (c.K + c.block - 1) / c.block, blob = c.block * c.bits / 8, levels = int64_t{1} << c.bits;
  std::uniform_int_distribution<int> code(0, static_cast<int>(levels - 1));
  std::uniform_real_distribution<float> scale(0.01f, 0.2f);
  p.codes.assign(static_cast<size_t>(c.N * kb * blob), 0);
  p.unpacked.assign(static_cast<size_t>(c.N * c.K), 0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < kb * c.block; ++k) {
      const int v = code(rng);  // padding positions past K get codes too: they must not count
      if (k < c.K) p.unpacked[n * c.K + k] = v;
      uint8_t& byte = p.codes[(n * kb + k / c.block) * blob + (c.bits == 4 ? (k % c.block) / 2 : k % c.block)];
      byte = c.bits == 8 ? static_cast<uint8_t>(v) : static_cast<uint8_t>(byte | (k % 2 == 0 ? v : v << 4));
    }
  for (int64_t i = 0; i < c.N * kb; ++i) p.scales.push_back(scale(rng));
  if (c.zp == 1) {
    const int64_t row = (kb * c.bits + 7) / 8;
    p.zp_packed.assign(static_cast<size_t>(c.N * row), 0);
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t b = 0; b < kb; ++b) {
        const int v = code(rng);
        uint8_t& byte = p.zp_packed[n * row + (c.bits == 4 ? b / 2 : b)];
        byte = c.bits == 8 ? static_cast<uint8_t>(v) : static_cast<uint8_t>(byte | (b % 2 == 0 ? v : v << 4));
      }
  }
  if (c.zp == 2)
    for (int64_t i = 0; i < c.N * kb; ++i) p.zp_float.push_back(static_cast<float>(code(rng)) + 0.25f);
  p.w.codes = p.codes.data();
  p.w.scales = p.scales.data();
  p.w.zero_packed = c.zp == 1 ? p.zp_packed.data() : nullptr;
  p.w.zero_float = c.zp == 2 ? p.zp_float.data() : nullptr;
  p.w.N = c.N;
  p.w.K = c.K;
  p.w.bits = c.bits;
  p.w.block_size = c.block;
  return p;
}

// Row m of A times weight row n of the unpacked codes, in double, and the sum of the products' magnitudes (the scale
// of the float error the kernels may make).
struct Reference {
  double value = 0, magnitude = 0;
};
Reference unpacked_product(const Packed& p, const Case& c, const std::vector<float>& A, int64_t m, int64_t n) {
  const int64_t kb = (c.K + c.block - 1) / c.block;
  Reference r;
  for (int64_t k = 0; k < c.K; ++k) {
    const int64_t b = k / c.block;
    const double wv = (p.unpacked[n * c.K + k] - kernels::nbits_zero(p.w, n, b)) * p.scales[n * kb + b];
    r.value += A[m * c.K + k] * wv;
    r.magnitude += std::fabs(A[m * c.K + k] * wv);
  }
  return r;
}

TEST(MatMulNBitsKernel, EveryFormEqualsTheUnpackedProduct) {
  const Case cases[] = {{64, 17, 4, 32, 0}, {100, 9, 4, 32, 1}, {200, 5, 4, 64, 2}, {50, 7, 4, 16, 1},
                        {37, 6, 4, 16, 0},  {130, 8, 8, 128, 1}, {48, 13, 8, 32, 0}, {70, 4, 8, 16, 2},
                        {256, 11, 4, 128, 1}, {96, 7, 4, 32, 2}, {160, 6, 4, 32, 0}, {192, 3, 4, 64, 1}};
  std::mt19937 rng(28);
  std::normal_distribution<float> normal(0.f, 1.f);
  int forms_run = 0;
  for (const Case& c : cases) {
    Packed p = make_weights(c, rng);
    for (int64_t M : {1, 2, 3, 4, 5, 9}) {
      std::vector<float> A(static_cast<size_t>(M * c.K));
      for (float& v : A) v = normal(rng);
      const kernels::NBitsActivations act = kernels::prepare_nbits_activations(A.data(), M, p.w);
      for (NBitsForm f : {NBitsForm::kScalar, NBitsForm::kAvx2, NBitsForm::kAvx512}) {
        if (!kernels::nbits_form_available(f, p.w)) continue;
        ++forms_run;
        const int64_t n0 = c.N > 3 ? 1 : 0, n1 = c.N;  // a sub-range: columns outside it stay untouched
        std::vector<float> Y(static_cast<size_t>(M * c.N), -7.f);
        kernels::matmul_nbits_f32_form(f, act, p.w, n0, n1, Y.data(), c.N);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < c.N; ++n) {
            const float got = Y[m * c.N + n];
            if (n < n0) {
              EXPECT_EQ(got, -7.f);
              continue;
            }
            const Reference want = unpacked_product(p, c, A, m, n);
            EXPECT_NEAR(got, want.value, 1e-5 * want.magnitude + 1e-6)
                << "form " << static_cast<int>(f) << " K " << c.K << " bits " << c.bits << " block " << c.block
                << " zp " << c.zp << " M " << M << " m " << m << " n " << n;
          }
      }
    }
  }
  EXPECT_GT(forms_run, 0);
}

// The GEMM path's decoded tiles: each weight at the position its activation takes in the prepared
// layout (found with a one-hot row of A), zeros past K.
TEST(MatMulNBitsKernel, DecodedRowsFollowThePreparedLayout) {
  std::mt19937 rng(29);
  for (const Case& c : {Case{100, 5, 4, 32, 1}, Case{37, 3, 4, 16, 2}, Case{130, 4, 8, 128, 0}, Case{64, 3, 8, 16, 1}}) {
    Packed p = make_weights(c, rng);
    const int64_t kb = (c.K + c.block - 1) / c.block;
    std::vector<float> one_hot(static_cast<size_t>(c.K), 0.f);
    const int64_t kp = kernels::prepare_nbits_activations(one_hot.data(), 1, p.w).k_padded;
    std::vector<float> tile(static_cast<size_t>(c.N * kp), -7.f);
    kernels::dequantize_nbits_rows(p.w, kp, 0, c.N, tile.data());
    std::vector<bool> used(static_cast<size_t>(kp), false);
    for (int64_t k = 0; k < c.K; ++k) {
      std::fill(one_hot.begin(), one_hot.end(), 0.f);
      one_hot[k] = 1.f;
      const kernels::NBitsActivations act = kernels::prepare_nbits_activations(one_hot.data(), 1, p.w);
      const int64_t pos = std::find(act.data.begin(), act.data.end(), 1.f) - act.data.begin();
      ASSERT_LT(pos, kp);
      used[pos] = true;
      for (int64_t n = 0; n < c.N; ++n) {
        const float scale = p.scales[n * kb + k / c.block];
        const float code = static_cast<float>(p.unpacked[n * c.K + k]), zero = kernels::nbits_zero(p.w, n, k / c.block);
        // fma(code, scale, -zero * scale): within an ulp of code * scale and of zero * scale
        EXPECT_NEAR(tile[n * kp + pos], (code - zero) * scale, 1e-6f * (code + std::fabs(zero)) * scale)
            << "k " << k << " n " << n;
      }
    }
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t pos = 0; pos < kp; ++pos)
        if (!used[pos] && pos >= kb * c.block) {
          EXPECT_EQ(tile[n * kp + pos], 0.f) << "padding " << pos;
        }
  }
}

// accuracy_level 4's int8 path: the quantized activations (as floats) are within half a step of A, and the
// VNNI and scalar forms equal the double product of those values with the unpacked weights, for bits 4 and 8,
// blocks 16 to 256 (a block wider than one 64-byte step of codes), rows that end mid-step, all zero-point forms.
TEST(MatMulNBitsKernel, Int8FormsEqualTheProductOfTheQuantizedActivations) {
  const Case cases[] = {{64, 17, 4, 32, 0},   {100, 9, 4, 32, 1},  {50, 7, 4, 16, 1},  {300, 5, 4, 256, 2},
                        {130, 8, 8, 128, 1},  {48, 13, 8, 32, 0},  {70, 4, 8, 16, 2},  {520, 6, 4, 64, 0},
                        {896, 3, 4, 32, 0}};
  std::mt19937 rng(30);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const Case& c : cases) {
    Packed p = make_weights(c, rng);
    const int64_t kb = (c.K + c.block - 1) / c.block;
    for (int64_t M : {1, 3, 5}) {
      std::vector<float> A(static_cast<size_t>(M * c.K));
      for (float& v : A) v = normal(rng);
      if (c.K > 40) std::fill(A.begin(), A.begin() + std::min<int64_t>(c.block, c.K), 0.f);  // an all-zero block
      const kernels::NBitsInt8Activations q = kernels::quantize_nbits_activations(A.data(), M, p.w);
      const std::vector<float> aq = kernels::nbits_int8_as_float(q, p.w);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < c.K; ++k) {
          const float step = q.scale[m * kb + k / c.block];
          ASSERT_LE(std::fabs(aq[m * c.K + k] - A[m * c.K + k]), 0.5f * step * 1.0001f + 1e-12f) << "k " << k;
        }
      for (bool vnni : {false, true}) {
        if (vnni && !kernels::nbits_int8_vnni_available()) continue;
        std::vector<float> Y(static_cast<size_t>(M * c.N), -7.f);
        kernels::matmul_nbits_int8_form(vnni, q, p.w, 0, c.N, Y.data(), c.N);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < c.N; ++n) {
            const Reference want = unpacked_product(p, c, aq, m, n);
            EXPECT_NEAR(Y[m * c.N + n], want.value, 1e-5 * want.magnitude + 1e-6)
                << (vnni ? "vnni" : "scalar") << " K " << c.K << " bits " << c.bits << " block " << c.block << " zp "
                << c.zp << " M " << M << " m " << m << " n " << n;
          }
      }
    }
  }
}

TEST(MatMulNBitsKernel, ZeroPointDefaultsAndUnpacking) {
  kernels::NBitsWeights w;
  w.N = 1;
  w.K = 64;
  w.block_size = 16;  // 4 blocks
  w.bits = 4;
  EXPECT_EQ(kernels::nbits_zero(w, 0, 2), 8.f);
  const uint8_t packed[] = {0x21, 0x43};
  w.zero_packed = packed;
  EXPECT_EQ(kernels::nbits_zero(w, 0, 0), 1.f);
  EXPECT_EQ(kernels::nbits_zero(w, 0, 1), 2.f);
  EXPECT_EQ(kernels::nbits_zero(w, 0, 3), 4.f);
  w.bits = 8;
  w.zero_packed = nullptr;
  EXPECT_EQ(kernels::nbits_zero(w, 0, 0), 128.f);
}

}  // namespace
}  // namespace glassbox::ops::testing
