// Conv / ConvTranspose (oneDNN path through the op) against the reference
// loops on awkward geometries, pools on known values, and attribute-rank errors.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/conv.h"
#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, dilations, pads;
  int64_t group;
  bool bias;
};

void expect_close(const Tensor& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.numel(), static_cast<int64_t>(b.size()));
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.data<float>()[i], b[i], tol * (1.f + std::fabs(b[i]))) << "at " << i;
}

kernels::ConvGeometry geometry(const ConvCase& c, const Shape& out) {
  kernels::ConvGeometry g;
  const size_t sp = c.x.size() - 2;
  g.spatial = static_cast<int>(sp);
  g.n = c.x[0];
  g.c_in = c.x[1];
  g.c_out = out[1];
  g.group = c.group;
  for (size_t i = 0; i < sp; ++i) {
    g.in[i] = c.x[i + 2];
    g.out[i] = out[i + 2];
    g.kernel[i] = c.w[i + 2];
    g.stride[i] = c.strides[i];
    g.dilation[i] = c.dilations[i];
    g.pad_begin[i] = c.pads[i];
    g.pad_end[i] = c.pads[i + sp];
  }
  return g;
}

TEST(Conv, OneDnnMatchesReferenceOnAwkwardShapes) {
  const std::vector<ConvCase> cases = {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, true},
      {{2, 3, 7, 9}, {4, 3, 3, 2}, {2, 1}, {1, 2}, {0, 1, 2, 0}, 1, false},  // asymmetric pads, dilation
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 6, true},   // depthwise
      {{1, 4, 5, 7}, {6, 2, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2, true},   // grouped 1x1
      {{3, 2, 11}, {5, 2, 4}, {3}, {2}, {2, 1}, 1, true},                   // 1-D
      {{1, 2, 4, 5, 3}, {3, 2, 2, 3, 1}, {1, 2, 1}, {1, 1, 1}, {1, 0, 0, 0, 1, 0}, 1, true},  // 3-D
      {{1, 3, 1, 1}, {2, 3, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true},  // size-1 spatial
  };
  uint32_t seed = 7;
  for (const auto& c : cases) {
    Tensor x = random_f32(c.x, seed++), w = random_f32(c.w, seed++), b = random_f32({c.w[0]}, seed++);
    std::vector<Tensor> in{x, w};
    if (c.bias) in.push_back(b);
    TestContext ctx(in);
    graph::Node node = make_node("Conv", {attr_is("strides", c.strides), attr_is("dilations", c.dilations),
                                          attr_is("pads", c.pads), attr_i("group", c.group)});
    ASSERT_TRUE(run_op(node, 13, ctx).ok());
    const Tensor& y = ctx.output(0);
    std::vector<float> ref(static_cast<size_t>(y.numel()));
    kernels::conv_f32_reference(geometry(c, y.shape()), x.data<float>(), w.data<float>(),
                                c.bias ? b.data<float>() : nullptr, ref.data());
    expect_close(y, ref, 1e-4f);
  }
}

TEST(Conv, AutoPadSameUpperKeepsSize) {
  TestContext ctx({random_f32({1, 2, 7, 6}, 1), random_f32({3, 2, 3, 3}, 2)});
  graph::Node node = make_node("Conv", {attr_s("auto_pad", "SAME_UPPER"), attr_is("strides", {2, 2})});
  ASSERT_TRUE(run_op(node, 11, ctx).ok());
  EXPECT_EQ(ctx.output(0).shape(), (Shape{1, 3, 4, 3}));
}

TEST(Conv, AttributeRankMismatchIsAnError) {
  TestContext ctx({random_f32({1, 2, 5, 5}, 1), random_f32({3, 2, 3, 3}, 2)});
  graph::Node node = make_node("Conv", {attr_is("strides", {1, 1, 1})});
  Status s = run_op(node, 11, ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.to_string().find("strides has 3 entries"), std::string::npos) << s.to_string();
  TestContext ctx2({random_f32({1, 2, 5, 5}, 1), random_f32({3, 2, 3, 3}, 2)});
  graph::Node node2 = make_node("Conv", {attr_is("pads", {1, 1})});
  EXPECT_FALSE(run_op(node2, 11, ctx2).ok());
  TestContext ctx3({random_f32({1, 2, 5, 5}, 1), random_f32({3, 1, 3, 3}, 2)});  // channel mismatch
  EXPECT_FALSE(run_op(make_node("Conv"), 11, ctx3).ok());
}

TEST(ConvTranspose, OneDnnMatchesReference) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads, output_padding;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{1, 2, 3, 3}, {2, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
      {{2, 4, 5, 4}, {4, 1, 2, 3}, {1, 2}, {0, 1, 1, 0}, {0, 0}, 2},
      {{1, 3, 6}, {3, 2, 4}, {3}, {0, 0}, {2}, 1},
  };
  uint32_t seed = 99;
  for (const auto& c : cases) {
    Tensor x = random_f32(c.x, seed++), w = random_f32(c.w, seed++), b = random_f32({c.w[1] * c.group}, seed++);
    TestContext ctx({x, w, b});
    graph::Node node = make_node("ConvTranspose", {attr_is("strides", c.strides), attr_is("pads", c.pads),
                                                   attr_is("output_padding", c.output_padding),
                                                   attr_i("group", c.group)});
    ASSERT_TRUE(run_op(node, 11, ctx).ok());
    const Tensor& y = ctx.output(0);
    kernels::ConvGeometry g;
    const size_t sp = c.x.size() - 2;
    g.spatial = static_cast<int>(sp);
    g.n = c.x[0];
    g.c_in = c.x[1];
    g.c_out = y.shape()[1];
    g.group = c.group;
    for (size_t i = 0; i < sp; ++i) {
      g.in[i] = c.x[i + 2];
      g.out[i] = y.shape()[i + 2];
      EXPECT_EQ(g.out[i], c.strides[i] * (c.x[i + 2] - 1) + c.output_padding[i] + c.w[i + 2] - c.pads[i] - c.pads[i + sp]);
      g.kernel[i] = c.w[i + 2];
      g.stride[i] = c.strides[i];
      g.pad_begin[i] = c.pads[i];
      g.pad_end[i] = c.pads[i + sp];
    }
    std::vector<float> ref(static_cast<size_t>(y.numel()));
    kernels::conv_transpose_f32_reference(g, x.data<float>(), w.data<float>(), b.data<float>(), ref.data());
    expect_close(y, ref, 1e-4f);
  }
}

TEST(Pool, MaxAndAverageKnownValues) {
  // 1x1x3x3 input 1..9, kernel 2, stride 1, pads 1 at the end.
  Tensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  {
    TestContext ctx({x}, 2);
    ASSERT_TRUE(run_op(make_node("MaxPool", {attr_is("kernel_shape", {2, 2}), attr_is("pads", {0, 0, 1, 1})}, 2), 12,
                       ctx).ok());
    EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
    EXPECT_EQ(to_vec_t<int64_t>(ctx.output(1)), (std::vector<int64_t>{4, 5, 5, 7, 8, 8, 7, 8, 8}));
  }
  {
    TestContext ctx({x});
    ASSERT_TRUE(run_op(make_node("AveragePool", {attr_is("kernel_shape", {2, 2}), attr_is("pads", {0, 0, 1, 1})}),
                       12, ctx).ok());
    EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9}));
  }
  {
    TestContext ctx({x});
    ASSERT_TRUE(run_op(make_node("AveragePool", {attr_is("kernel_shape", {2, 2}), attr_is("pads", {0, 0, 1, 1}),
                                                 attr_i("count_include_pad", 1)}),
                       12, ctx).ok());
    EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{3, 4, 2.25f, 6, 7, 3.75f, 3.75f, 4.25f, 2.25f}));
  }
  {
    TestContext ctx({x});  // ceil_mode: 3 -> kernel 2 stride 2 -> 2 outputs
    ASSERT_TRUE(run_op(make_node("MaxPool", {attr_is("kernel_shape", {2, 2}), attr_is("strides", {2, 2}),
                                             attr_i("ceil_mode", 1)}),
                       12, ctx).ok());
    EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{5, 6, 8, 9}));
  }
  {
    TestContext ctx({x});
    ASSERT_TRUE(run_op(make_node("GlobalAveragePool"), 12, ctx).ok());
    EXPECT_EQ(ctx.output(0).shape(), (Shape{1, 1, 1, 1}));
    EXPECT_FLOAT_EQ(ctx.output(0).data<float>()[0], 5.f);
  }
}

TEST(Pool, KernelRankMismatchIsAnError) {
  TestContext ctx({random_f32({1, 1, 4, 4}, 3)});
  Status s = run_op(make_node("MaxPool", {attr_is("kernel_shape", {2})}), 12, ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.to_string().find("kernel_shape"), std::string::npos);
  TestContext ctx2({random_f32({1, 1, 4, 4}, 3)});
  EXPECT_FALSE(run_op(make_node("AveragePool", {attr_is("kernel_shape", {2, 2}), attr_is("pads", {1, 1})}), 12, ctx2).ok());
}

TEST(Norm, BatchAndLayerNormMatchNaive) {
  Tensor x = random_f32({2, 3, 4, 5}, 11);
  Tensor sc = random_f32({3}, 12), bi = random_f32({3}, 13), mean = random_f32({3}, 14), var = random_f32({3}, 15, 0.1f, 2.f);
  TestContext ctx({x, sc, bi, mean, var});
  ASSERT_TRUE(run_op(make_node("BatchNormalization", {attr_f("epsilon", 1e-3f)}), 15, ctx).ok());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = (i / 20) % 3;
    const float want = (x.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 1e-3f) *
                           sc.data<float>()[c] + bi.data<float>()[c];
    ASSERT_NEAR(ctx.output(0).data<float>()[i], want, 1e-4f);
  }
  Tensor g = random_f32({5}, 16), b = random_f32({5}, 17);
  TestContext ln({x, g, b}, 3);
  ASSERT_TRUE(run_op(make_node("LayerNormalization", {}, 3), 17, ln).ok());
  EXPECT_EQ(ln.output(1).shape(), (Shape{2, 3, 4, 1}));
  for (int64_t r = 0; r < 24; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < 5; ++j) m += x.data<float>()[r * 5 + j];
    m /= 5;
    for (int j = 0; j < 5; ++j) v += (x.data<float>()[r * 5 + j] - m) * (x.data<float>()[r * 5 + j] - m);
    v /= 5;
    for (int j = 0; j < 5; ++j) {
      const double want = (x.data<float>()[r * 5 + j] - m) / std::sqrt(v + 1e-5) * g.data<float>()[j] + b.data<float>()[j];
      ASSERT_NEAR(ln.output(0).data<float>()[r * 5 + j], want, 1e-4);
    }
  }
}

}  // namespace
}  // namespace glassbox::testing_nn

namespace glassbox::testing_nn {
namespace {

TEST(Pool, MaxPoolUint8AndScatterAlias) {
  Tensor x = make_tensor<uint8_t>(DataType::kUInt8, {1, 1, 2, 2}, {3, 250, 7, 1});
  TestContext ctx({x});
  ASSERT_TRUE(run_op(make_node("MaxPool", {attr_is("kernel_shape", {2, 2})}), 12, ctx).ok());
  EXPECT_EQ(ctx.output(0).dtype(), DataType::kUInt8);
  EXPECT_EQ(ctx.output(0).data<uint8_t>()[0], 250);
  TestContext sc({f32({3}, {1, 2, 3}), i64({1}, {-1}), f32({1}, {9})});
  ASSERT_TRUE(run_op(make_node("Scatter"), 10, sc).ok());
  EXPECT_EQ(to_vec(sc.output(0)), (std::vector<float>{1, 2, 9}));
}

}  // namespace
}  // namespace glassbox::testing_nn
