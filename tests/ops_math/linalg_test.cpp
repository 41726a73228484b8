// MatMul / Gemm (oneDNN) vs the triple-loop reference; Softmax family and
// reductions vs naive references. Fixed seeds, awkward shapes.
#include <cmath>
#include <limits>

#include "kernels/gemm.h"
#include "kernels/softmax.h"
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

// Naive numpy matmul for rank >= 2 operands with batch broadcasting.
std::vector<float> naive_matmul(const Tensor& a, const Tensor& b, const Shape& out) {
  const int64_t M = a.shape()[a.rank() - 2], K = a.shape().back(), N = b.shape().back();
  const Shape batch(out.begin(), out.end() - 2);
  int64_t nb = 1;
  for (auto d : batch) nb *= d;
  const Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  std::vector<float> y(nb * M * N);
  for (int64_t n = 0; n < nb; ++n) {
    const int64_t oa = batch.empty() ? 0 : bcast_index(batch, ba, n), ob = batch.empty() ? 0 : bcast_index(batch, bb, n);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += double(a.data<float>()[oa * M * K + i * K + k]) * b.data<float>()[ob * K * N + k * N + j];
        y[n * M * N + i * N + j] = float(s);
      }
  }
  return y;
}

TEST(MatMul, MatchesReferenceOnAwkwardShapes) {
  const std::pair<Shape, Shape> cases[] = {
      {{1, 1}, {1, 1}}, {{3, 5}, {5, 7}}, {{2, 3, 17}, {17, 9}}, {{4, 2, 3, 8}, {4, 2, 8, 5}},
      {{2, 1, 3, 4}, {1, 5, 4, 6}}, {{3, 4}, {2, 4, 5}}, {{0, 4}, {4, 3}}, {{3, 0}, {0, 2}}, {{33, 65}, {65, 129}}};
  uint32_t seed = 11;
  for (const auto& [sa, sb] : cases) {
    Tensor a = random_f32(sa, seed++), b = random_f32(sb, seed++);
    auto out = run_op(NodeBuilder("MatMul", 2).node, 13, {&a, &b}, 2);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    SCOPED_TRACE(shape_to_string(sa) + " x " + shape_to_string(sb));
    expect_close((*out)[0], naive_matmul(a, b, (*out)[0].shape()), 1e-4f, 1e-4f);
  }
}

TEST(MatMul, VectorOperands) {
  Tensor a = random_f32({4}, 1), b = random_f32({4, 3}, 2), v = random_f32({3}, 3);
  auto y = run_op(NodeBuilder("MatMul", 2).node, 13, {&a, &b}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{3}));
  auto z = run_op(NodeBuilder("MatMul", 2).node, 13, {&b, &v}).value()[0];
  EXPECT_EQ(z.shape(), (Shape{4}));
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += b.data<float>()[i * 3 + j] * v.data<float>()[j];
    EXPECT_NEAR(z.data<float>()[i], s, 1e-5);
  }
}

TEST(Gemm, TransposesAlphaBetaAndBroadcastC) {
  uint32_t seed = 50;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (const Shape& sc : {Shape{}, Shape{7}, Shape{5, 1}, Shape{5, 7}}) {
        const int64_t M = 5, N = 7, K = 3;
        Tensor a = random_f32(ta ? Shape{K, M} : Shape{M, K}, seed++), b = random_f32(tb ? Shape{N, K} : Shape{K, N}, seed++);
        Tensor c = random_f32(sc, seed++);
        auto node = NodeBuilder("Gemm", 3).i("transA", ta).i("transB", tb).f("alpha", 0.5f).f("beta", 2.f).node;
        auto out = run_op(node, 13, {&a, &b, &c});
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        std::vector<float> want(M * N);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k)
              s += double(ta ? a.data<float>()[k * M + i] : a.data<float>()[i * K + k]) *
                   (tb ? b.data<float>()[j * K + k] : b.data<float>()[k * N + j]);
            want[i * N + j] = float(0.5 * s + 2.0 * c.data<float>()[bcast_index({M, N}, sc, i * N + j)]);
          }
        expect_close((*out)[0], want, 1e-4f, 1e-5f);
      }
}

TEST(GemmKernel, DnnlMatchesReferenceWithStrides) {
  kernels::GemmDesc d;
  d.batch = 3; d.M = 9; d.N = 13; d.K = 31; d.trans_b = true;
  d.lda = 33; d.ldb = 35; d.ldc = 15;
  d.stride_a = d.M * d.lda; d.stride_b = 0; d.stride_c = d.M * d.ldc;
  Tensor a = random_f32({d.batch * d.stride_a}, 3), b = random_f32({d.N * d.ldb}, 4);
  std::vector<float> c1(d.batch * d.stride_c, 0.f), c2 = c1;
  ThreadPool pool(2);
  kernels::gemm_f32(d, a.data<float>(), b.data<float>(), c1.data(), &pool);
  kernels::gemm_f32_reference(d, a.data<float>(), b.data<float>(), c2.data());
  for (size_t i = 0; i < c1.size(); ++i) ASSERT_NEAR(c1[i], c2[i], 1e-4) << i;
}

TEST(Softmax, AxisSemanticsByOpset) {
  Tensor x = random_f32({2, 3, 5}, 77, -20, 20);
  for (int64_t opset : {11, 13})
    for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"})
      for (int64_t axis : {-1, 0, 1, 2}) {
        auto out = run_op(NodeBuilder(op, 1).i("axis", axis).node, opset, {&x}, 2);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        const int64_t a = axis < 0 ? axis + 3 : axis;
        int64_t outer = 1, n = 1, inner = 1;
        for (int64_t i = 0; i < 3; ++i) (i < a ? outer : (i == a || opset < 13) ? n : inner) *= x.shape()[i];
        std::vector<float> want(x.numel());
        const std::string o = op;
        kernels::softmax_f32_reference(x.data<float>(), want.data(), outer, n, inner,
                                       o == "Softmax"      ? kernels::SoftmaxKind::kSoftmax
                                       : o == "LogSoftmax" ? kernels::SoftmaxKind::kLogSoftmax
                                                           : kernels::SoftmaxKind::kHardmax);
        SCOPED_TRACE(o + " opset " + std::to_string(opset) + " axis " + std::to_string(axis));
        expect_close((*out)[0], want, 1e-5f, 1e-6f);
      }
}

TEST(Reduce, MatchesNaiveForAxisSets) {
  const Shape shape{3, 1, 4, 5};
  Tensor x = random_f32(shape, 99, 0.1f, 2.f);
  const std::vector<std::vector<int64_t>> axes_sets = {{}, {0}, {-1}, {1}, {0, 2}, {1, 3}, {0, 3}, {0, 1, 2, 3}, {2, 3}};
  const char* ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  for (const char* op : ops)
    for (const auto& axes : axes_sets)
      for (int keepdims : {0, 1}) {
        auto b = NodeBuilder(op, 1).i("keepdims", keepdims);
        if (!axes.empty()) b.ints("axes", axes);
        auto out = run_op(b.node, 11, {&x}, 2);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        std::vector<bool> red(4, axes.empty());
        for (auto a : axes) red[a < 0 ? a + 4 : a] = true;
        Shape kshape;
        for (int d = 0; d < 4; ++d) kshape.push_back(red[d] ? 1 : shape[d]);
        int64_t kn = 1;
        for (auto d : kshape) kn *= d;
        std::vector<double> acc(kn, 0), mx(kn, -1e30), mn(kn, 1e30), prod(kn, 1);
        std::vector<int64_t> cnt(kn, 0);
        for (int64_t e = 0; e < x.numel(); ++e) {
          int64_t r = e, o = 0, mul = 1;
          for (int d = 3; d >= 0; --d) {
            const int64_t i = r % shape[d];
            r /= shape[d];
            if (!red[d]) o += i * mul;
            mul *= kshape[d];
          }
          const double v = x.data<float>()[e];
          const std::string s = op;
          acc[o] += s == "ReduceL2" || s == "ReduceSumSquare" ? v * v : s == "ReduceLogSumExp" ? std::exp(v) : std::fabs(v);
          mx[o] = std::max(mx[o], v);
          mn[o] = std::min(mn[o], v);
          prod[o] *= v;
          cnt[o]++;
        }
        std::vector<float> want(kn);
        const std::string s = op;
        for (int64_t o = 0; o < kn; ++o)
          want[o] = s == "ReduceMean" ? acc[o] / cnt[o] : s == "ReduceMax" ? mx[o] : s == "ReduceMin" ? mn[o]
                    : s == "ReduceProd" ? prod[o] : s == "ReduceL2" ? std::sqrt(acc[o])
                    : s == "ReduceLogSum" || s == "ReduceLogSumExp" ? std::log(acc[o]) : acc[o];
        SCOPED_TRACE(s + " keepdims " + std::to_string(keepdims) + " naxes " + std::to_string(axes.size()));
        expect_close((*out)[0], want, 1e-5f, 1e-5f);
        if (!keepdims) {
          Shape ks;
          for (int d = 0; d < 4; ++d)
            if (!red[d]) ks.push_back(shape[d]);
          EXPECT_EQ((*out)[0].shape(), ks);
        }
      }
}

TEST(Reduce, SumAxesInputAndNoop) {
  Tensor x = random_f32({2, 3}, 5);
  Tensor axes = make_tensor<int64_t>(DataType::kInt64, {1}, {-1});
  auto y = run_op(NodeBuilder("ReduceSum", 2).i("keepdims", 0).node, 13, {&x, &axes}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{2}));
  Tensor empty = Tensor::allocate(DataType::kInt64, {0}).value();
  auto z = run_op(NodeBuilder("ReduceSum", 2).i("noop_with_empty_axes", 1).node, 13, {&x, &empty}).value()[0];
  EXPECT_EQ(z.shape(), x.shape());
}

TEST(ArgMax, TiesAndSelectLast) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, {1, 3, 3, 2, 2, 0});
  auto a = run_op(NodeBuilder("ArgMax", 1).i("axis", 1).node, 13, {&x}).value()[0];
  EXPECT_EQ(a.shape(), (Shape{2, 1}));
  EXPECT_EQ(a.data<int64_t>()[0], 1);
  EXPECT_EQ(a.data<int64_t>()[1], 0);
  auto b = run_op(NodeBuilder("ArgMax", 1).i("axis", -1).i("keepdims", 0).i("select_last_index", 1).node, 13, {&x})
               .value()[0];
  EXPECT_EQ(b.shape(), (Shape{2}));
  EXPECT_EQ(b.data<int64_t>()[0], 2);
  EXPECT_EQ(b.data<int64_t>()[1], 1);
  auto c = run_op(NodeBuilder("ArgMin", 1).i("axis", 0).node, 13, {&x}).value()[0];
  EXPECT_EQ(c.data<int64_t>()[2], 1);
}

}  // namespace
}  // namespace glassbox::ops::testing

#include <dlfcn.h>

namespace glassbox::ops::testing {
namespace {

// gemm_dnnl.cpp runs oneDNN single-threaded through omp_set_num_threads found
// at run time; if libdnnl ever stops loading an OpenMP runtime, this says so.
TEST(GemmKernel, OpenMpThreadCapIsReachable) {
  EXPECT_NE(dlsym(RTLD_DEFAULT, "omp_set_num_threads"), nullptr);
  // And a run with a 1-thread cap still computes correctly.
  kernels::GemmDesc d;
  d.M = 4; d.N = 3; d.K = 2; d.lda = 2; d.ldb = 3; d.ldc = 3;
  const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[6] = {1, 0, 0, 0, 1, 0};
  float c[12];
  kernels::gemm_f32(d, a, b, c, nullptr);
  EXPECT_EQ(c[3], 3.f);
  EXPECT_EQ(c[4], 4.f);
  EXPECT_EQ(c[5], 0.f);
}

}  // namespace
}  // namespace glassbox::ops::testing
