// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss vs hand-derived values:
// reductions, weights, ignore_index (negative, out of class range), N-D targets,
// int32 targets, float64, empty batches and the error paths.
#include <cmath>
#include <limits>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

graph::Node nll(const std::string& reduction, int n_in = 2) {
  return NodeBuilder("NegativeLogLikelihoodLoss", n_in).s("reduction", reduction).node;
}

// log-probabilities [N=2, C=3]; targets pick -3 and -4.
const std::vector<float> kLogP = {-1, -2, -3, -4, -5, -6};

TEST(NegativeLogLikelihoodLoss, ReductionsWithoutWeight) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, kLogP);
  Tensor t = make_tensor<int64_t>(DataType::kInt64, {2}, {2, 0});
  auto none = run_op(nll("none"), 13, {&x, &t}).value()[0];
  EXPECT_EQ(none.shape(), (Shape{2}));
  expect_close(none, {3, 4});
  auto sum = run_op(nll("sum"), 13, {&x, &t}).value()[0];
  EXPECT_EQ(sum.shape(), Shape{});
  expect_close(sum, {7});
  // reduction defaults to mean
  expect_close(run_op(NodeBuilder("NegativeLogLikelihoodLoss", 2).node, 12, {&x, &t}).value()[0], {3.5f});
}

TEST(NegativeLogLikelihoodLoss, WeightsAndIgnoreIndex) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, kLogP);
  Tensor t = make_tensor<int32_t>(DataType::kInt32, {2}, {2, 0});  // int32 targets
  Tensor w = make_tensor<float>(DataType::kFloat32, {3}, {0.5f, 1.f, 2.f});
  expect_close(run_op(nll("none", 3), 13, {&x, &t, &w}).value()[0], {6, 2});
  // mean divides by the gathered weights: (6 + 2) / (2 + 0.5)
  expect_close(run_op(nll("mean", 3), 13, {&x, &t, &w}).value()[0], {3.2f});
  auto ii0 = NodeBuilder("NegativeLogLikelihoodLoss", 3).i("ignore_index", 0).node;
  expect_close(run_op(ii0, 13, {&x, &t, &w}).value()[0], {3.f});  // 6 / 2: target 0 ignored
  // without weights, mean divides by the count of targets that are not ignored
  auto ii2 = NodeBuilder("NegativeLogLikelihoodLoss", 2).i("ignore_index", 2).node;
  expect_close(run_op(ii2, 13, {&x, &t}).value()[0], {4.f});
}

TEST(NegativeLogLikelihoodLoss, SpatialDimsAndNegativeIgnoreIndex) {
  // [N=1, C=2, d1=3]: loss[0, d] = -x[0, t[d], d]
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor t = make_tensor<int64_t>(DataType::kInt64, {1, 3}, {1, -7, 1});
  auto n = NodeBuilder("NegativeLogLikelihoodLoss", 2).s("reduction", "none").i("ignore_index", -7).node;
  auto y = run_op(n, 13, {&x, &t}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  expect_close(y, {4, 0, 6});
  // an ignore_index above C never matches a valid class
  Tensor t2 = make_tensor<int64_t>(DataType::kInt64, {1, 3}, {1, 0, 10});
  auto n2 = NodeBuilder("NegativeLogLikelihoodLoss", 2).s("reduction", "sum").i("ignore_index", 10).node;
  expect_close(run_op(n2, 13, {&x, &t2}).value()[0], {6});
}

TEST(NegativeLogLikelihoodLoss, Float64AndEmptyBatch) {
  Tensor x = make_tensor<double>(DataType::kFloat64, {1, 2}, {-0.25, -0.75});
  Tensor t = make_tensor<int64_t>(DataType::kInt64, {1}, {1});
  auto y = run_op(nll("mean"), 13, {&x, &t}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  EXPECT_DOUBLE_EQ(y.data<double>()[0], 0.75);
  Tensor e = make_tensor<float>(DataType::kFloat32, {0, 4}, {});
  Tensor te = make_tensor<int64_t>(DataType::kInt64, {0}, {});
  EXPECT_EQ(run_op(nll("none"), 13, {&e, &te}).value()[0].numel(), 0);
  expect_close(run_op(nll("sum"), 13, {&e, &te}).value()[0], {0});
  expect_close(run_op(nll("mean"), 13, {&e, &te}).value()[0], {std::numeric_limits<float>::quiet_NaN()});
}

TEST(NegativeLogLikelihoodLoss, Errors) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, kLogP);
  Tensor bad = make_tensor<int64_t>(DataType::kInt64, {2}, {3, 0});
  auto r = run_op(nll("none"), 13, {&x, &bad});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().what.find("target element 0 is 3"), std::string::npos) << r.error().what;
  Tensor neg = make_tensor<int64_t>(DataType::kInt64, {2}, {0, -1});
  EXPECT_FALSE(run_op(nll("none"), 13, {&x, &neg}).ok());
  Tensor wrong_shape = make_tensor<int64_t>(DataType::kInt64, {3}, {0, 0, 0});
  r = run_op(nll("none"), 13, {&x, &wrong_shape});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().what.find("must have shape [2]"), std::string::npos) << r.error().what;
  Tensor t = make_tensor<int64_t>(DataType::kInt64, {2}, {0, 0});
  Tensor w2 = make_tensor<float>(DataType::kFloat32, {2}, {1, 1});
  EXPECT_FALSE(run_op(nll("none", 3), 13, {&x, &t, &w2}).ok());
  Tensor x1 = make_tensor<float>(DataType::kFloat32, {3}, {1, 2, 3});
  EXPECT_FALSE(run_op(nll("none"), 13, {&x1, &t}).ok());
  EXPECT_FALSE(create_op(nll("avg"), 13).ok());
}

TEST(SoftmaxCrossEntropyLoss, LogProbAndLoss) {
  // scores [0, ln 3] -> softmax [1/4, 3/4]
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 2}, {0, std::log(3.f), 5, 5});
  Tensor y = make_tensor<int64_t>(DataType::kInt64, {2}, {0, 1});
  auto out = run_op(NodeBuilder("SoftmaxCrossEntropyLoss", 2, 2).s("reduction", "none").node, 13, {&x, &y}).value();
  expect_close(out[0], {std::log(4.f), std::log(2.f)});
  EXPECT_EQ(out[1].shape(), (Shape{2, 2}));
  expect_close(out[1], {-std::log(4.f), std::log(0.75f), -std::log(2.f), -std::log(2.f)});
  Tensor w = make_tensor<float>(DataType::kFloat32, {2}, {3, 1});
  auto mean = run_op(NodeBuilder("SoftmaxCrossEntropyLoss", 3).node, 13, {&x, &y, &w}).value();
  expect_close(mean[0], {(3 * std::log(4.f) + std::log(2.f)) / 4});
}

TEST(SoftmaxCrossEntropyLoss, ClassAxisIsOneForNd) {
  // [N=1, C=2, d1=2, d2=1]: softmax runs over C separately at each spatial position.
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 2, 2, 1}, {0, 7, std::log(3.f), 7});
  Tensor y = make_tensor<int64_t>(DataType::kInt64, {1, 2, 1}, {1, 0});
  auto out = run_op(NodeBuilder("SoftmaxCrossEntropyLoss", 2).s("reduction", "sum").i("ignore_index", 0).node, 13,
                    {&x, &y}).value();
  expect_close(out[0], {std::log(4.f / 3.f)});
}

}  // namespace
}  // namespace glassbox::ops::testing
