// Elementwise ops through the registry vs scalar references, fixed seed,
// awkward shapes (scalars, size 1, odd sizes, broadcasts, empty), 1 and 4 threads.
#include <cmath>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

TEST(Unary, MatchesScalarFunctions) {
  struct Case { const char* op; float (*ref)(float); float lo, hi; };
  const Case cases[] = {
      {"Abs", [](float x) { return std::fabs(x); }, -3, 3},
      {"Neg", [](float x) { return -x; }, -3, 3},
      {"Sqrt", [](float x) { return std::sqrt(x); }, 0, 9},
      {"Exp", [](float x) { return std::exp(x); }, -5, 5},
      {"Log", [](float x) { return std::log(x); }, 0.01f, 9},
      {"Erf", [](float x) { return std::erf(x); }, -3, 3},
      {"Tanh", [](float x) { return std::tanh(x); }, -5, 5},
      {"Sigmoid", [](float x) { return 1.f / (1.f + std::exp(-x)); }, -20, 20},
      {"Relu", [](float x) { return x > 0 ? x : 0.f; }, -3, 3},
      {"Round", [](float x) { return std::nearbyint(x); }, -3, 3},
      {"Softplus", [](float x) { return std::log1p(std::exp(x)); }, -5, 5},
      {"Softsign", [](float x) { return x / (1 + std::fabs(x)); }, -5, 5},
      {"HardSwish", [](float x) { return x * std::fmax(0.f, std::fmin(1.f, x / 6 + 0.5f)); }, -5, 5},
  };
  uint32_t seed = 1;
  for (const auto& c : cases)
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{7}, Shape{3, 0}, Shape{33, 1025}})
      for (int threads : {1, 4}) {
        Tensor x = random_f32(shape, seed++, c.lo, c.hi);
        auto out = run_op(NodeBuilder(c.op, 1).node, 17, {&x}, threads);
        ASSERT_TRUE(out.ok()) << c.op << ": " << out.error().to_string();
        std::vector<float> want(x.numel());
        for (int64_t i = 0; i < x.numel(); ++i) want[i] = c.ref(x.data<float>()[i]);
        SCOPED_TRACE(c.op);
        expect_close((*out)[0], want, 1e-5f, 1e-6f);
      }
}

TEST(Unary, RefusesUnsupportedDtypeAndAttrs) {
  Tensor x = Tensor::allocate(DataType::kInt32, {3}).value();
  auto out = run_op(NodeBuilder("Sqrt", 1).node, 17, {&x});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kUnsupported);
  EXPECT_FALSE(create_op(NodeBuilder("Relu", 1).i("consumed_inputs", 1).node, 17).ok());
}

TEST(Binary, BroadcastMatchesNaive) {
  const std::pair<Shape, Shape> shapes[] = {
      {{}, {}}, {{5}, {}}, {{}, {5}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{1, 7}, {9, 1}},
      {{4, 1, 3, 1}, {1, 5, 1, 6}}, {{0, 3}, {1, 3}}, {{65, 1031}, {65, 1}}, {{3, 5000}, {5000}}};
  struct Case { const char* op; float (*ref)(float, float); };
  const Case cases[] = {{"Add", [](float a, float b) { return a + b; }},
                        {"Sub", [](float a, float b) { return a - b; }},
                        {"Mul", [](float a, float b) { return a * b; }},
                        {"Div", [](float a, float b) { return a / b; }},
                        {"Pow", [](float a, float b) { return std::pow(std::fabs(a), b); }}};
  uint32_t seed = 100;
  for (const auto& c : cases)
    for (const auto& [sa, sb] : shapes)
      for (int threads : {1, 3}) {
        Tensor a = random_f32(sa, seed++, 0.5f, 3.f), b = random_f32(sb, seed++, 0.5f, 3.f);
        auto out = run_op(NodeBuilder(c.op, 2).node, 17, {&a, &b}, threads);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        const Tensor& y = (*out)[0];
        std::vector<float> want(y.numel());
        for (int64_t i = 0; i < y.numel(); ++i)
          want[i] = c.ref(a.data<float>()[bcast_index(y.shape(), sa, i)], b.data<float>()[bcast_index(y.shape(), sb, i)]);
        SCOPED_TRACE(std::string(c.op) + " " + shape_to_string(sa) + " " + shape_to_string(sb));
        expect_close(y, want);
      }
}

TEST(Binary, IncompatibleShapesFail) {
  Tensor a = random_f32({2, 3}, 1), b = random_f32({4}, 2);
  EXPECT_FALSE(run_op(NodeBuilder("Add", 2).node, 17, {&a, &b}).ok());
}

TEST(Binary, IntegerModAndDiv) {
  Tensor a = make_tensor<int32_t>(DataType::kInt32, {4}, {-7, 7, -7, 7});
  Tensor b = make_tensor<int32_t>(DataType::kInt32, {4}, {3, -3, -3, 0});
  auto m = run_op(NodeBuilder("Mod", 2).node, 17, {&a, &b}).value()[0];
  EXPECT_EQ(std::vector<int32_t>(m.data<int32_t>(), m.data<int32_t>() + 4), (std::vector<int32_t>{2, -2, -1, 0}));
  auto f = run_op(NodeBuilder("Mod", 2).i("fmod", 1).node, 17, {&a, &b}).value()[0];
  EXPECT_EQ(std::vector<int32_t>(f.data<int32_t>(), f.data<int32_t>() + 4), (std::vector<int32_t>{-1, 1, -1, 0}));
  auto d = run_op(NodeBuilder("Div", 2).node, 17, {&a, &b}).value()[0];
  EXPECT_EQ(std::vector<int32_t>(d.data<int32_t>(), d.data<int32_t>() + 4), (std::vector<int32_t>{-2, -2, 2, 0}));
}

TEST(Where, ThreeWayBroadcast) {
  Tensor c = make_tensor<bool>(DataType::kBool, {2, 1}, {true, false});
  Tensor x = random_f32({1, 3}, 5), y = random_f32({}, 6);
  auto out = run_op(NodeBuilder("Where", 3).node, 17, {&c, &x, &y}).value()[0];
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  const float* p = out.data<float>();
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(p[j], x.data<float>()[j]);
    EXPECT_EQ(p[3 + j], y.data<float>()[0]);
  }
}

TEST(Variadic, SumMeanMaxBroadcast) {
  Tensor a = random_f32({2, 3}, 7), b = random_f32({3}, 8), c = random_f32({2, 1}, 9);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    auto out = run_op(NodeBuilder(op, 3).node, 17, {&a, &b, &c}).value()[0];
    std::vector<float> want(6);
    for (int i = 0; i < 6; ++i) {
      const float va = a.data<float>()[i], vb = b.data<float>()[i % 3], vc = c.data<float>()[i / 3];
      const std::string o = op;
      want[i] = o == "Sum" ? va + vb + vc : o == "Mean" ? (va + vb + vc) / 3 : o == "Max" ? std::fmax(va, std::fmax(vb, vc))
                                                                                         : std::fmin(va, std::fmin(vb, vc));
    }
    SCOPED_TRACE(op);
    expect_close(out, want);
  }
}

TEST(Cast, FloatIntHalfRoundTrip) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {5}, {1.5f, -2.7f, 0.f, 1e10f, -0.25f});
  auto i = run_op(NodeBuilder("Cast", 1).i("to", 7).node, 17, {&x}).value()[0];
  EXPECT_EQ(i.dtype(), DataType::kInt64);
  EXPECT_EQ(i.data<int64_t>()[0], 1);
  EXPECT_EQ(i.data<int64_t>()[1], -2);
  EXPECT_EQ(i.data<int64_t>()[3], 10000000000LL);
  auto h = run_op(NodeBuilder("Cast", 1).i("to", 10).node, 17, {&x}).value()[0];
  auto back = run_op(NodeBuilder("Cast", 1).i("to", 1).node, 17, {&h}).value()[0];
  EXPECT_EQ(back.data<float>()[0], 1.5f);
  EXPECT_EQ(back.data<float>()[4], -0.25f);
  EXPECT_TRUE(std::isinf(back.data<float>()[3]));
  EXPECT_FALSE(create_op(NodeBuilder("Cast", 1).i("to", 8).node, 17).ok());  // string
}

TEST(Clip, AttributeAndInputForms) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {4}, {-2, -0.5f, 0.5f, 2});
  auto a = run_op(NodeBuilder("Clip", 1).f("min", -1).f("max", 1).node, 6, {&x}).value()[0];
  expect_close(a, {-1, -0.5f, 0.5f, 1});
  Tensor lo = make_tensor<float>(DataType::kFloat32, {}, {0.f});
  auto b = run_op(NodeBuilder("Clip", 2).node, 13, {&x, &lo}).value()[0];
  expect_close(b, {0, 0, 0.5f, 2});
}

}  // namespace
}  // namespace glassbox::ops::testing
