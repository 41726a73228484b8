// DFT, STFT, Hann/Hamming/Blackman windows, MelWeightMatrix: against a direct
// DFT sum written here (odd, power-of-two and size-1 lengths), hand-computed
// windows and filters, and bad inputs.
#include <cmath>
#include <complex>
#include <numbers>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

using cd = std::complex<double>;

std::vector<cd> naive_dft(const std::vector<cd>& x, int64_t n, bool inverse) {
  std::vector<cd> y(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    cd s = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j)
      s += x[j] * std::polar(1.0, (inverse ? 2.0 : -2.0) * std::numbers::pi * static_cast<double>(j * k) / static_cast<double>(n));
    y[k] = inverse ? s / static_cast<double>(n) : s;
  }
  return y;
}

Tensor scalar_i64(int64_t v) { return make_tensor<int64_t>(DataType::kInt64, {}, {v}); }

TEST(DFT, MatchesDirectSumForRealAndComplexInputs) {
  for (int64_t n_in : {1, 5, 8, 12, 97, 130}) {  // direct sum, radix 2, Bluestein (> 64, not 2^k)
    for (int64_t comps : {1, 2}) {
      Tensor x = random_f32({2, n_in, comps}, static_cast<uint32_t>(n_in * 10 + comps));
      for (int64_t n : {n_in, n_in + 3, std::max<int64_t>(1, n_in - 2)}) {  // as is, zero-padded, truncated
        for (int64_t onesided : {0, 1}) {
          Tensor len = scalar_i64(n);
          auto y = run_op(NodeBuilder("DFT", 2).i("onesided", onesided).node, 17, {&x, &len});
          ASSERT_TRUE(y.ok()) << y.status().to_string();
          const int64_t bins = onesided ? n / 2 + 1 : n;
          ASSERT_EQ(y.value()[0].shape(), (Shape{2, bins, 2}));
          std::vector<float> want;
          for (int64_t b = 0; b < 2; ++b) {
            std::vector<cd> sig;
            for (int64_t j = 0; j < n_in; ++j) {
              const float* v = x.data<float>() + (b * n_in + j) * comps;
              sig.emplace_back(v[0], comps == 2 ? v[1] : 0.f);
            }
            auto f = naive_dft(sig, n, false);
            for (int64_t k = 0; k < bins; ++k) {
              want.push_back(static_cast<float>(f[k].real()));
              want.push_back(static_cast<float>(f[k].imag()));
            }
          }
          SCOPED_TRACE("n_in " + std::to_string(n_in) + " comps " + std::to_string(comps) + " n " + std::to_string(n));
          expect_close(y.value()[0], want, 1e-5f, 1e-5f);
        }
      }
    }
  }
}

TEST(DFT, InverseUndoesForwardOnAnInnerAxis) {
  Tensor x = random_f32({2, 3, 7, 2}, 5);  // signal along axis 2 (odd length)
  auto f = run_op(NodeBuilder("DFT", 1).i("axis", 2).node, 17, {&x}).value()[0];
  ASSERT_EQ(f.shape(), (Shape{2, 3, 7, 2}));
  auto back = run_op(NodeBuilder("DFT", 1).i("axis", 2).i("inverse", 1).node, 17, {&f}).value()[0];
  expect_close(back, std::vector<float>(x.data<float>(), x.data<float>() + x.numel()), 1e-5f, 1e-5f);
  Tensor long_x = random_f32({1, 101, 2}, 6);  // Bluestein length, both directions
  auto lf = run_op(NodeBuilder("DFT", 1).node, 17, {&long_x}).value()[0];
  auto lb = run_op(NodeBuilder("DFT", 1).i("inverse", 1).node, 17, {&lf}).value()[0];
  expect_close(lb, std::vector<float>(long_x.data<float>(), long_x.data<float>() + long_x.numel()), 1e-5f, 1e-5f);
  // float64 goes through too.
  Tensor d = make_tensor<double>(DataType::kFloat64, {1, 2, 1}, {1, 2});
  auto fd = run_op(NodeBuilder("DFT", 1).node, 17, {&d}).value()[0];
  EXPECT_DOUBLE_EQ(fd.data<double>()[0], 3.0);
  EXPECT_DOUBLE_EQ(fd.data<double>()[2], -1.0);
}

TEST(DFT, BadInputsAreErrors) {
  Tensor x = random_f32({1, 4, 3}, 1);  // last dim must be 1 or 2
  EXPECT_FALSE(run_op(NodeBuilder("DFT", 1).node, 17, {&x}).ok());
  Tensor y = random_f32({1, 4, 1}, 1);
  EXPECT_FALSE(run_op(NodeBuilder("DFT", 1).i("axis", 2).node, 17, {&y}).ok());  // the complex dim
  Tensor zero = scalar_i64(0);
  EXPECT_FALSE(run_op(NodeBuilder("DFT", 2).node, 17, {&y, &zero}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("DFT", 1).i("inverse", 1).i("onesided", 1).node, 17).ok());
}

TEST(STFT, FramesAreWindowedDfts) {
  Tensor x = random_f32({2, 11, 1}, 9);
  Tensor step = scalar_i64(3);
  Tensor window = make_tensor<float>(DataType::kFloat32, {5}, {0.1f, 0.5f, 1.f, 0.5f, 0.1f});
  for (int64_t onesided : {0, 1}) {
    auto y = run_op(NodeBuilder("STFT", 3).i("onesided", onesided).node, 17, {&x, &step, &window});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    const int64_t frames = (11 - 5) / 3 + 1, bins = onesided ? 3 : 5;
    ASSERT_EQ(y.value()[0].shape(), (Shape{2, frames, bins, 2}));
    std::vector<float> want;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        std::vector<cd> frame;
        for (int64_t j = 0; j < 5; ++j) frame.emplace_back(x.data<float>()[b * 11 + f * 3 + j] * window.data<float>()[j], 0.0);
        auto s = naive_dft(frame, 5, false);
        for (int64_t k = 0; k < bins; ++k) {
          want.push_back(static_cast<float>(s[k].real()));
          want.push_back(static_cast<float>(s[k].imag()));
        }
      }
    expect_close(y.value()[0], want, 1e-5f, 1e-5f);
  }
}

TEST(STFT, BadInputsAreErrors) {
  Tensor x = random_f32({1, 4, 1}, 2);
  Tensor step = scalar_i64(1);
  Tensor len8 = scalar_i64(8);
  Tensor none;
  EXPECT_FALSE(run_op(NodeBuilder("STFT", 4).node, 17, {&x, &step, &none, &len8}).ok());  // frame longer than signal
  Tensor len3 = scalar_i64(3);
  Tensor win2 = make_tensor<float>(DataType::kFloat32, {2}, {1, 1});
  EXPECT_FALSE(run_op(NodeBuilder("STFT", 4).node, 17, {&x, &step, &win2, &len3}).ok());  // window vs frame_length
  Tensor zero_step = scalar_i64(0);
  EXPECT_FALSE(run_op(NodeBuilder("STFT", 4).node, 17, {&x, &zero_step, &none, &len3}).ok());
  Tensor complex_x = random_f32({1, 4, 2}, 2);
  EXPECT_FALSE(run_op(NodeBuilder("STFT", 4).node, 17, {&complex_x, &step, &none, &len3}).ok());  // onesided needs real
  auto ok = run_op(NodeBuilder("STFT", 4).node, 17, {&x, &step, &none, &len3});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok.value()[0].shape(), (Shape{1, 2, 2, 2}));
}

TEST(Windows, HandComputedValues) {
  Tensor four = scalar_i64(4), three = scalar_i64(3), one = scalar_i64(1), zero = scalar_i64(0);
  expect_close(run_op(NodeBuilder("HannWindow", 1).node, 17, {&four}).value()[0], {0, 0.5f, 1, 0.5f});
  expect_close(run_op(NodeBuilder("HannWindow", 1).i("periodic", 0).node, 17, {&three}).value()[0], {0, 1, 0});
  expect_close(run_op(NodeBuilder("HammingWindow", 1).i("periodic", 0).node, 17, {&three}).value()[0],
               {4.f / 46.f, 1.f, 4.f / 46.f});
  expect_close(run_op(NodeBuilder("BlackmanWindow", 1).i("periodic", 0).node, 17, {&three}).value()[0], {0, 1, 0},
               1e-5f, 1e-6f);
  expect_close(run_op(NodeBuilder("HannWindow", 1).i("periodic", 0).node, 17, {&one}).value()[0], {1});
  EXPECT_EQ(run_op(NodeBuilder("BlackmanWindow", 1).node, 17, {&zero}).value()[0].shape(), (Shape{0}));
  auto d = run_op(NodeBuilder("HannWindow", 1).i("output_datatype", 11).node, 17, {&four}).value()[0];
  ASSERT_EQ(d.dtype(), DataType::kFloat64);
  EXPECT_DOUBLE_EQ(d.data<double>()[1], 0.5);
  Tensor negative = scalar_i64(-1);
  EXPECT_FALSE(run_op(NodeBuilder("HannWindow", 1).node, 17, {&negative}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("HannWindow", 1).i("output_datatype", 8).node, 17).ok());  // string
}

TEST(MelWeightMatrix, OneTriangleAndBadEdges) {
  // 1 mel bin over 0..4 Hz, dft_length 8, sample_rate 8: band edges at spectrum bins 0, 1, 2.
  Tensor mels = scalar_i64(1), dft = scalar_i64(8), rate = scalar_i64(8);
  Tensor lo = make_tensor<float>(DataType::kFloat32, {}, {0.f});
  Tensor hi = make_tensor<float>(DataType::kFloat32, {}, {4.f});
  auto y = run_op(NodeBuilder("MelWeightMatrix", 5).node, 17, {&mels, &dft, &rate, &lo, &hi});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y.value()[0].shape(), (Shape{5, 1}));
  expect_close(y.value()[0], {0, 1, 0, 0, 0});
  Tensor too_high = make_tensor<float>(DataType::kFloat32, {}, {100.f});  // far above sample_rate / 2
  EXPECT_FALSE(run_op(NodeBuilder("MelWeightMatrix", 5).node, 17, {&mels, &dft, &rate, &lo, &too_high}).ok());
  Tensor no_mels = scalar_i64(0);
  EXPECT_FALSE(run_op(NodeBuilder("MelWeightMatrix", 5).node, 17, {&no_mels, &dft, &rate, &lo, &hi}).ok());
}

}  // namespace
}  // namespace glassbox::ops::testing
