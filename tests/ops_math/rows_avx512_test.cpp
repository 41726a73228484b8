// The AVX-512 row kernels (src/kernels/x86/rows_avx512.cpp) against the scalar loops they stand in
// for: equal bit for bit (NaN for NaN), for every tail length, large offsets, special values,
// in place, both mask forms.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/layer_norm.h"
#include "kernels/softmax.h"
#include "test_util.h"

namespace glassbox::kernels::x86 {  // src/kernels/x86/{vmath,rows}_avx512.cpp
bool avx512_available();
void layer_norm_row_avx512(const float* x, int64_t n, const float* gamma, const float* beta, float eps, float* y);
void scaled_masked_softmax_row_avx512(const float* x, const float* mask, int64_t mask_stride, float* y, int64_t n,
                                      float scale);
}  // namespace glassbox::kernels::x86

namespace glassbox::ops::testing {
namespace {

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

const int64_t kLengths[] = {1, 2, 15, 16, 17, 31, 33, 128, 384, 768, 769};

TEST(RowsAvx512, LayerNormEqualsScalarRow) {
  if (!kernels::x86::avx512_available()) GTEST_SKIP() << "CPU lacks AVX-512";
  uint32_t seed = 11;
  for (int64_t n : kLengths)
    for (float offset : {0.f, 1000.f, -3e4f}) {
      Tensor x = random_f32({n}, seed++, -4.f, 4.f), g = random_f32({n}, seed++), b = random_f32({n}, seed++);
      std::vector<float> in(x.data<float>(), x.data<float>() + n);
      for (float& v : in) v += offset;
      std::vector<float> want(n), got(n), inplace = in;
      kernels::layer_norm_row_f32_scalar(in.data(), n, g.data<float>(), b.data<float>(), 1e-12f, want.data());
      kernels::x86::layer_norm_row_avx512(in.data(), n, g.data<float>(), b.data<float>(), 1e-12f, got.data());
      expect_same_bits(got, want, "n " + std::to_string(n) + " offset " + std::to_string(offset));
      kernels::x86::layer_norm_row_avx512(inplace.data(), n, g.data<float>(), b.data<float>(), 1e-12f, inplace.data());
      expect_same_bits(inplace, want, "in place, n " + std::to_string(n));
    }
  // A row with an infinity or a NaN: both forms propagate it the same way.
  for (float special : {INFINITY, NAN}) {
    std::vector<float> in(37, 0.5f), g(37, 1.f), b(37, 0.f), want(37), got(37);
    in[20] = special;
    kernels::layer_norm_row_f32_scalar(in.data(), 37, g.data(), b.data(), 1e-5f, want.data());
    kernels::x86::layer_norm_row_avx512(in.data(), 37, g.data(), b.data(), 1e-5f, got.data());
    expect_same_bits(got, want, "special");
  }
}

TEST(RowsAvx512, ScaledMaskedSoftmaxEqualsScalarRow) {
  if (!kernels::x86::avx512_available()) GTEST_SKIP() << "CPU lacks AVX-512";
  uint32_t seed = 101;
  for (int64_t n : kLengths)
    for (int64_t stride : {1, 0}) {
      Tensor x = random_f32({n}, seed++, -30.f, 30.f), m = random_f32({n}, seed++, -1e4f, 0.f);
      std::vector<float> in(x.data<float>(), x.data<float>() + n), mask(m.data<float>(), m.data<float>() + n);
      if (n > 3) mask[n / 2] = -INFINITY;  // a masked-out key
      std::vector<float> want(n), got(n), inplace = in;
      kernels::scaled_masked_softmax_row_f32_scalar(in.data(), mask.data(), stride, want.data(), n, 0.125f);
      kernels::x86::scaled_masked_softmax_row_avx512(in.data(), mask.data(), stride, got.data(), n, 0.125f);
      const std::string what = "n " + std::to_string(n) + " stride " + std::to_string(stride);
      expect_same_bits(got, want, what);
      kernels::x86::scaled_masked_softmax_row_avx512(inplace.data(), mask.data(), stride, inplace.data(), n, 0.125f);
      expect_same_bits(inplace, want, "in place, " + what);
    }
  // Rows fully masked (-inf everywhere), with a NaN, with +inf: same outputs.
  for (float special : {-INFINITY, NAN, INFINITY}) {
    for (int64_t n : {5, 16, 40}) {
      std::vector<float> in(n, 1.f), mask(n, std::isnan(special) ? 0.f : special), want(n), got(n);
      in[n / 3] = special;
      kernels::scaled_masked_softmax_row_f32_scalar(in.data(), mask.data(), 1, want.data(), n, 0.5f);
      kernels::x86::scaled_masked_softmax_row_avx512(in.data(), mask.data(), 1, got.data(), n, 0.5f);
      expect_same_bits(got, want, "special n " + std::to_string(n));
    }
  }
}

}  // namespace
}  // namespace glassbox::ops::testing
