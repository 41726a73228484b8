// Kernels of the internal fused ops against references: layer_norm_rows_f32 vs
// norm.h's double-accumulating layer_norm_f32, gelu_erf_f32 vs libm erf. Odd
// widths (tails of the 16-lane loops), one row, a large row offset.
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/layer_norm.h"
#include "kernels/norm.h"
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

TEST(FusedKernels, LayerNormRowsMatchesReference) {
  ThreadPool pool(3);
  uint32_t seed = 5;
  for (int64_t rows : {1, 3, 300})
    for (int64_t cols : {1, 15, 16, 17, 384, 769}) {
      for (float offset : {0.f, 1000.f}) {
        Tensor x = random_f32({rows * cols}, seed++), g = random_f32({cols}, seed++), b = random_f32({cols}, seed++);
        float* px = x.mutable_data<float>();
        for (int64_t i = 0; i < rows * cols; ++i) px[i] += offset;
        std::vector<float> got(rows * cols), want(rows * cols);
        kernels::layer_norm_rows_f32(rows, cols, px, g.data<float>(), b.data<float>(), 1e-5f, got.data(), &pool);
        kernels::layer_norm_f32(rows, cols, px, g.data<float>(), false, b.data<float>(), false, 1e-5f, want.data(),
                                nullptr, nullptr, nullptr);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 2e-4 * (1 + std::fabs(want[i]))) << rows << "x" << cols << " offset " << offset << " at " << i;
      }
    }
}

TEST(FusedKernels, GeluErfMatchesLibm) {
  ThreadPool pool(2);
  for (int64_t n : {1, 7, 1025, 70001}) {
    Tensor x = random_f32({n}, static_cast<uint32_t>(n), -8.f, 8.f);
    std::vector<float> y(n);
    kernels::gelu_erf_f32(x.data<float>(), y.data(), n, &pool);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x.data<float>()[i];
      const double want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      ASSERT_NEAR(y[i], want, 1e-5 * (1 + std::fabs(want))) << "n " << n << " x " << v;
    }
  }
}

}  // namespace
}  // namespace glassbox::ops::testing

namespace glassbox::ops::testing {
namespace {

// glassbox::ScaledMaskedSoftmax against scale, broadcast add and softmax done naively,
// for masks broadcasting along every kind of axis (incl. a single value per row).
TEST(FusedKernels, ScaledMaskedSoftmaxBroadcastsTheMask) {
  const Shape scores{2, 3, 5, 7};
  const std::vector<Shape> masks = {{2, 1, 1, 7}, {7}, {1}, {3, 1, 7}, {2, 3, 5, 1}, {2, 3, 5, 7}};
  Tensor x = random_f32(scores, 41, -4.f, 4.f);
  for (const Shape& ms : masks) {
    Tensor mask = random_f32(ms, 42, -10.f, 0.f);
    auto node = NodeBuilder("ScaledMaskedSoftmax", 2).f("scale", 0.125f).node;
    node.domain = "glassbox";
    auto out = run_op(node, 14, {&x, &mask}, 2);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    std::vector<float> want(x.numel());
    const int64_t n = scores.back();
    for (int64_t row = 0; row < x.numel() / n; ++row) {
      std::vector<double> t(n);
      double m = -1e300, sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        t[k] = 0.125 * x.data<float>()[row * n + k] + mask.data<float>()[bcast_index(scores, ms, row * n + k)];
        m = std::max(m, t[k]);
      }
      for (int64_t k = 0; k < n; ++k) sum += std::exp(t[k] - m);
      for (int64_t k = 0; k < n; ++k) want[row * n + k] = float(std::exp(t[k] - m) / sum);
    }
    SCOPED_TRACE("mask " + shape_to_string(ms));
    expect_close((*out)[0], want, 1e-5f, 1e-6f);
  }
}

}  // namespace
}  // namespace glassbox::ops::testing
