// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, ConvInteger and
// QLinearConv vs hand-derived values: ties to even, saturation, per-axis
// parameters (negative axis), per-channel zero points, padding semantics and
// refusals. Peer comparison: scripts/parity/op_cases.py.
#include <cmath>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

template <class T>
std::vector<T> vals(const Tensor& t) {
  return {t.data<T>(), t.data<T>() + t.numel()};
}

TEST(QuantizeLinear, TiesToEvenAndSaturation) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 300, -300});
  Tensor s = make_tensor<float>(DataType::kFloat32, {}, {1});
  Tensor z = make_tensor<int8_t>(DataType::kInt8, {}, {0});
  auto y = run_op(NodeBuilder("QuantizeLinear", 3).node, 13, {&x, &s, &z}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(vals<int8_t>(y), (std::vector<int8_t>{-2, -2, 0, 0, 2, 2, 127, -128}));
  // no zero point: uint8 with zero point 0
  auto u = run_op(NodeBuilder("QuantizeLinear", 2).node, 10, {&x, &s}).value()[0];
  ASSERT_EQ(u.dtype(), DataType::kUInt8);
  EXPECT_EQ(vals<uint8_t>(u), (std::vector<uint8_t>{0, 0, 0, 0, 2, 2, 255, 0}));
}

TEST(QuantizeLinear, PerAxisNegativeAxis) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, {4, 4, 4, 8, 8, 8});
  Tensor s = make_tensor<float>(DataType::kFloat32, {3}, {1, 2, 4});
  Tensor z = make_tensor<uint8_t>(DataType::kUInt8, {3}, {0, 1, 2});
  auto y = run_op(NodeBuilder("QuantizeLinear", 3).i("axis", -1).node, 13, {&x, &s, &z}).value()[0];
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{4, 3, 3, 8, 5, 4}));
  // per-axis parameters need opset 13, and a matching length
  EXPECT_FALSE(run_op(NodeBuilder("QuantizeLinear", 3).node, 10, {&x, &s, &z}).ok());
  auto r = run_op(NodeBuilder("QuantizeLinear", 3).node, 13, {&x, &s, &z});  // axis 1 is fine: 3 entries
  EXPECT_TRUE(r.ok());
  auto bad = run_op(NodeBuilder("QuantizeLinear", 3).i("axis", 0).node, 13, {&x, &s, &z});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().what.find("has 2 at axis 0"), std::string::npos) << bad.error().what;
}

TEST(DequantizeLinear, Int8PerAxisAndInt32) {
  Tensor x = make_tensor<int8_t>(DataType::kInt8, {2, 2}, {-128, 127, -128, 127});
  Tensor s = make_tensor<float>(DataType::kFloat32, {2}, {0.5f, 2});
  Tensor z = make_tensor<int8_t>(DataType::kInt8, {2}, {-128, 0});
  auto y = run_op(NodeBuilder("DequantizeLinear", 3).i("axis", 0).node, 13, {&x, &s, &z}).value()[0];
  expect_close(y, {0, 127.5f, -256, 254});
  Tensor xi = make_tensor<int32_t>(DataType::kInt32, {3}, {-70000, 0, 9});
  Tensor s1 = make_tensor<float>(DataType::kFloat32, {}, {0.25f});
  expect_close(run_op(NodeBuilder("DequantizeLinear", 2).node, 13, {&xi, &s1}).value()[0], {-17500, 0, 2.25f});
  Tensor zi = make_tensor<int32_t>(DataType::kInt32, {}, {1});
  EXPECT_FALSE(run_op(NodeBuilder("DequantizeLinear", 3).node, 13, {&xi, &s1, &zi}).ok());
  Tensor zu = make_tensor<uint8_t>(DataType::kUInt8, {2}, {0, 0});  // zero point dtype must be x's
  EXPECT_FALSE(run_op(NodeBuilder("DequantizeLinear", 3).i("axis", 0).node, 13, {&x, &s, &zu}).ok());
}

TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {3}, {-1, 0.55f, 1.55f});
  auto out = run_op(NodeBuilder("DynamicQuantizeLinear", 1, 3).node, 11, {&x}).value();
  EXPECT_NEAR(out[1].data<float>()[0], 0.01f, 1e-7f);
  EXPECT_EQ(out[2].data<uint8_t>()[0], 100);
  EXPECT_EQ(vals<uint8_t>(out[0]), (std::vector<uint8_t>{0, 155, 255}));
  // all positive: the range still starts at 0, so the zero point is 0
  Tensor p = make_tensor<float>(DataType::kFloat32, {2}, {2.55f, 1.275f});
  auto pos = run_op(NodeBuilder("DynamicQuantizeLinear", 1, 3).node, 11, {&p}).value();
  EXPECT_EQ(pos[2].data<uint8_t>()[0], 0);
  EXPECT_EQ(pos[0].data<uint8_t>()[0], 255);
  // all zero: scale 1 (not 0/255), zero point 0
  Tensor zero = make_tensor<float>(DataType::kFloat32, {1, 2}, {0, 0});
  auto zz = run_op(NodeBuilder("DynamicQuantizeLinear", 1, 3).node, 11, {&zero}).value();
  EXPECT_EQ(zz[1].data<float>()[0], 1.f);
  EXPECT_EQ(vals<uint8_t>(zz[0]), (std::vector<uint8_t>{0, 0}));
}

TEST(ConvInteger, PerChannelWeightZeroPointAndPadding) {
  // 1x1 kernels: channel 0 has w - w_zp = 0, channel 1 has w - w_zp = 1 -> y = x - x_zp.
  Tensor x = make_tensor<uint8_t>(DataType::kUInt8, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = make_tensor<uint8_t>(DataType::kUInt8, {2, 1, 1, 1}, {5, 7});
  Tensor xz = make_tensor<uint8_t>(DataType::kUInt8, {}, {1});
  Tensor wz = make_tensor<uint8_t>(DataType::kUInt8, {2}, {5, 6});
  auto y = run_op(NodeBuilder("ConvInteger", 4).node, 10, {&x, &w, &xz, &wz}).value()[0];
  ASSERT_EQ(y.shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(vals<int32_t>(y), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // padding contributes 0 after the zero point (pad value = x_zero_point), not (0 - x_zp)
  Tensor x2 = make_tensor<uint8_t>(DataType::kUInt8, {1, 1, 1, 2}, {3, 4});
  Tensor w2 = make_tensor<uint8_t>(DataType::kUInt8, {1, 1, 1, 3}, {2, 2, 2});
  Tensor xz2 = make_tensor<uint8_t>(DataType::kUInt8, {}, {3});
  Tensor wz2 = make_tensor<uint8_t>(DataType::kUInt8, {}, {1});
  auto y2 = run_op(NodeBuilder("ConvInteger", 4).ints("pads", {0, 1, 0, 1}).node, 10, {&x2, &w2, &xz2, &wz2}).value()[0];
  EXPECT_EQ(vals<int32_t>(y2), (std::vector<int32_t>{1, 1}));
  Tensor wz_bad = make_tensor<uint8_t>(DataType::kUInt8, {3}, {0, 0, 0});
  EXPECT_FALSE(run_op(NodeBuilder("ConvInteger", 4).node, 10, {&x, &w, &xz, &wz_bad}).ok());
}

TEST(QLinearConv, PerChannelScaleBiasAndTies) {
  Tensor x = make_tensor<uint8_t>(DataType::kUInt8, {1, 1, 1, 3}, {10, 20, 30});
  Tensor xs = make_tensor<float>(DataType::kFloat32, {}, {0.5f});
  Tensor xz = make_tensor<uint8_t>(DataType::kUInt8, {}, {10});
  Tensor w = make_tensor<int8_t>(DataType::kInt8, {2, 1, 1, 1}, {2, -4});
  Tensor ws = make_tensor<float>(DataType::kFloat32, {2}, {1, 0.25f});
  Tensor wz = make_tensor<int8_t>(DataType::kInt8, {2}, {0, 0});
  Tensor ys = make_tensor<float>(DataType::kFloat32, {}, {1});
  Tensor yz = make_tensor<uint8_t>(DataType::kUInt8, {}, {100});
  Tensor b = make_tensor<int32_t>(DataType::kInt32, {2}, {1, 0});
  // ch0: acc = (x - 10) * 2 + 1 = 1, 21, 41; * 0.5 = 0.5, 10.5, 20.5 -> ties to even 0, 10, 20
  // ch1: acc = (x - 10) * -4 = 0, -40, -80; * 0.125 = 0, -5, -10
  auto y = run_op(NodeBuilder("QLinearConv", 9).node, 10, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b}).value()[0];
  ASSERT_EQ(y.dtype(), DataType::kUInt8);
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{100, 110, 120, 100, 95, 90}));
  Tensor b_bad = make_tensor<int32_t>(DataType::kInt32, {3}, {0, 0, 0});
  EXPECT_FALSE(run_op(NodeBuilder("QLinearConv", 9).node, 10, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b_bad}).ok());
}

}  // namespace
}  // namespace glassbox::ops::testing
