// GEMM kernel variants against the double-accumulating reference on awkward
// shapes: the tiled gemm_f32 (batch ranges, column blocks, row blocks spread over
// a ThreadPool) and gemm_f32_packed (constant B packed once) with every
// epilogue (bias, GELU, residual). ThreadPool itself: thread_pool_test.cpp.
#include <atomic>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

void expect_near_rel(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 1.0;  // absolute floor: a lone GELU(-6) output is -6e-9 vs oneDNN's 0
  for (float w : want) scale = std::max(scale, std::fabs(double(w)));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * scale) << "at " << i;
}

TEST(GemmKernel, TiledMatchesReferenceOnAwkwardShapes) {
  struct Case {
    int64_t batch, M, N, K;
    bool ta, tb, shared_b;
  };
  // Big enough to be split (>= 2^20 multiply-adds), odd sizes, every tiling route.
  const Case cases[] = {{1, 7, 1000, 300, false, false, false},   // column blocks, partial last block
                        {1, 333, 100, 129, true, false, false},   // row blocks (N < 128), transposed A
                        {1, 129, 257, 65, false, true, false},    // columns, transposed B
                        {5, 33, 65, 127, false, false, false},    // batch ranges
                        {7, 17, 19, 300, false, true, true},      // batch ranges, shared B
                        {3, 1, 1, 1, false, false, false}};       // tiny: one tile
  uint32_t seed = 100;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (const auto& c : cases) {
      kernels::GemmDesc d;
      d.batch = c.batch; d.M = c.M; d.N = c.N; d.K = c.K; d.trans_a = c.ta; d.trans_b = c.tb;
      d.lda = (c.ta ? c.M : c.K) + 3;
      d.ldb = (c.tb ? c.K : c.N) + 1;
      d.ldc = c.N + 2;
      d.stride_a = (c.ta ? c.K : c.M) * d.lda;
      d.stride_b = c.shared_b ? 0 : (c.tb ? c.N : c.K) * d.ldb;
      d.stride_c = c.M * d.ldc;
      Tensor a = random_f32({c.batch * d.stride_a}, seed++), b = random_f32({std::max<int64_t>(1, c.batch) * (c.tb ? c.N : c.K) * d.ldb}, seed++);
      std::vector<float> got(c.batch * d.stride_c, 0.f), want = got;
      kernels::gemm_f32(d, a.data<float>(), b.data<float>(), got.data(), &pool);
      kernels::gemm_f32_reference(d, a.data<float>(), b.data<float>(), want.data());
      SCOPED_TRACE("threads " + std::to_string(threads) + " batch " + std::to_string(c.batch) + " M " +
                   std::to_string(c.M) + " N " + std::to_string(c.N) + " K " + std::to_string(c.K));
      expect_near_rel(got, want, 1e-5);
    }
  }
}

// Weights viewed in a mapped model file can sit at any byte address: packing from a
// misaligned copy must give exactly the packing of the aligned weights.
TEST(GemmKernel, PackingMisalignedWeightsEqualsAligned) {
  ThreadPool pool(2);
  uint32_t seed = 99;
  for (const auto& [K, N] : {std::pair<int64_t, int64_t>{33, 1}, {65, 200}, {128, 384}})
    for (bool tb : {false, true}) {
      Tensor b = random_f32({K * N}, seed++), a = random_f32({7 * K}, seed++);
      std::vector<char> shifted(static_cast<size_t>(K * N) * sizeof(float) + 3);
      std::memcpy(shifted.data() + 1, b.data<float>(), static_cast<size_t>(K * N) * sizeof(float));
      auto aligned = kernels::pack_gemm_b_f32(K, N, tb, tb ? K : N, b.data<float>(), &pool);
      auto misaligned = kernels::pack_gemm_b_f32(K, N, tb, tb ? K : N, shifted.data() + 1, &pool);
      std::vector<float> c1(static_cast<size_t>(7 * N)), c2(c1.size());
      kernels::gemm_f32_packed(7, a.data<float>(), K, *aligned, c1.data(), N, {}, &pool);
      kernels::gemm_f32_packed(7, a.data<float>(), K, *misaligned, c2.data(), N, {}, &pool);
      EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)), 0) << K << "x" << N << " trans_b " << tb;
    }
}

TEST(GemmKernel, PackedWithEpiloguesMatchesReference) {
  // M = 1 (single token), odd, > 256 (row blocks); N below, at and above the block widths.
  const int64_t Ms[] = {1, 7, 300};
  const std::pair<int64_t, int64_t> KNs[] = {{33, 1}, {65, 200}, {128, 384}, {31, 777}};
  uint32_t seed = 7;
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    for (const auto& [K, N] : KNs)
      for (bool tb : {false, true}) {
        Tensor b = random_f32({K * N}, seed++), bias = random_f32({N}, seed++);
        auto packed = kernels::pack_gemm_b_f32(K, N, tb, tb ? K : N, b.data<float>(), &pool);
        ASSERT_GE(kernels::packed_gemm_b_bytes(*packed), K * N * 4);
        for (int64_t M : Ms) {
          Tensor a = random_f32({M * K}, seed++), res = random_f32({M * N}, seed++);
          for (int variant = 0; variant < 4; ++variant) {
            kernels::GemmEpilogue ep;
            if (variant >= 1) ep.bias = bias.data<float>();
            if (variant == 2) ep.activation = kernels::GemmActivation::kGeluErf;
            if (variant == 3) {
              ep.residual = res.data<float>();
              ep.ld_residual = N;
            }
            std::vector<float> got(M * N, -1.f), want(M * N, 0.f);
            kernels::gemm_f32_packed(M, a.data<float>(), K, *packed, got.data(), N, ep, &pool);
            kernels::GemmDesc d;
            d.M = M; d.N = N; d.K = K; d.trans_b = tb; d.lda = K; d.ldb = tb ? K : N; d.ldc = N;
            kernels::gemm_f32_reference(d, a.data<float>(), b.data<float>(), want.data());
            kernels::apply_gemm_epilogue(M, N, want.data(), N, ep);
            SCOPED_TRACE("threads " + std::to_string(threads) + " M " + std::to_string(M) + " K " + std::to_string(K) +
                         " N " + std::to_string(N) + " trans_b " + std::to_string(tb) + " variant " + std::to_string(variant));
            expect_near_rel(got, want, 1e-5);
          }
        }
      }
  }
}

}  // namespace
}  // namespace glassbox::ops::testing
