// RNN / GRU / LSTM: hand-derived one-unit cases, layout=1 equal to layout=0 on
// transposed data, sequence_lens, and the refusals. Peer comparison of the
// attribute combinations (bidirectional, clip, activations...) lives in
// scripts/parity/op_cases.py (ctest parity_onnxruntime_ops).
#include <cmath>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

TEST(RNN, OneUnitByHand) {
  // seq 2, batch 1, input 1, hidden 1: h1 = tanh(0.5 * 1 + 0.1 + 0.2), h2 = tanh(0.5 * 2 + 0.25 * h1 + 0.3)
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 1, 1}, {1, 2});
  Tensor w = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {0.5f});
  Tensor r = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {0.25f});
  Tensor b = make_tensor<float>(DataType::kFloat32, {1, 2}, {0.1f, 0.2f});
  auto out = run_op(NodeBuilder("RNN", 4, 2).i("hidden_size", 1).node, 14, {&x, &w, &r, &b}).value();
  const float h1 = std::tanh(0.8f), h2 = std::tanh(1.3f + 0.25f * h1);
  EXPECT_EQ(out[0].shape(), (Shape{2, 1, 1, 1}));
  expect_close(out[0], {h1, h2});
  EXPECT_EQ(out[1].shape(), (Shape{1, 1, 1}));
  expect_close(out[1], {h2});
  // reverse: walks t = 1, then t = 0; Y keeps time order
  auto rev = run_op(NodeBuilder("RNN", 4, 2).s("direction", "reverse").node, 14, {&x, &w, &r, &b}).value();
  const float g1 = std::tanh(1.3f), g0 = std::tanh(0.8f + 0.25f * g1);
  expect_close(rev[0], {g0, g1});
  expect_close(rev[1], {g0});
}

TEST(GRU, OneUnitByHandBothResetForms) {
  // W = [z, r, h] = [1, 2, 3], R = [0.5, 0.25, 2], initial h = 0.5, x = 1, no bias.
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {1});
  Tensor w = make_tensor<float>(DataType::kFloat32, {1, 3, 1}, {1, 2, 3});
  Tensor r = make_tensor<float>(DataType::kFloat32, {1, 3, 1}, {0.5f, 0.25f, 2});
  Tensor b = make_tensor<float>(DataType::kFloat32, {1, 6}, {0, 0, 0, 0, 0, 0.75f});  // R_bh only
  Tensor h0 = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {0.5f});
  const float z = sigmoid(1 + 0.25f), rg = sigmoid(2 + 0.125f);
  // linear_before_reset = 0: h~ = tanh(3 + (r * h0) * 2 + 0.75)
  auto y0 = run_op(NodeBuilder("GRU", 6, 2).node, 14, {&x, &w, &r, &b, nullptr, &h0}).value();
  const float ht0 = std::tanh(3 + rg * 0.5f * 2 + 0.75f);
  expect_close(y0[1], {(1 - z) * ht0 + z * 0.5f});
  // linear_before_reset = 1: h~ = tanh(3 + r * (h0 * 2 + 0.75))
  auto y1 = run_op(NodeBuilder("GRU", 6, 2).i("linear_before_reset", 1).node, 14, {&x, &w, &r, &b, nullptr, &h0})
                .value();
  const float ht1 = std::tanh(3 + rg * (0.5f * 2 + 0.75f));
  expect_close(y1[1], {(1 - z) * ht1 + z * 0.5f});
}

TEST(LSTM, OneUnitByHandWithPeepholes) {
  // gates [i, o, f, c]: W = [1, 2, 3, 4], R = 0, x = 0.5, c0 = 1, P = [i, o, f] = [0.1, 0.2, 0.3]
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {0.5f});
  Tensor w = make_tensor<float>(DataType::kFloat32, {1, 4, 1}, {1, 2, 3, 4});
  Tensor r = make_tensor<float>(DataType::kFloat32, {1, 4, 1}, {0, 0, 0, 0});
  Tensor c0 = make_tensor<float>(DataType::kFloat32, {1, 1, 1}, {1});
  Tensor p = make_tensor<float>(DataType::kFloat32, {1, 3}, {0.1f, 0.2f, 0.3f});
  auto out = run_op(NodeBuilder("LSTM", 8, 3).node, 14, {&x, &w, &r, nullptr, nullptr, nullptr, &c0, &p}).value();
  const float i = sigmoid(0.5f + 0.1f), f = sigmoid(1.5f + 0.3f), c = std::tanh(2.f);
  const float cn = f * 1 + i * c, o = sigmoid(1.f + 0.2f * cn);
  expect_close(out[2], {cn});
  expect_close(out[1], {o * std::tanh(cn)});
  expect_close(out[0], {o * std::tanh(cn)});
}

// layout=1 is layout=0 with X, Y and the states transposed.
TEST(GRU, BatchwiseLayoutEqualsTransposed) {
  const int64_t T = 3, B = 2, I = 3, H = 2;
  Tensor x = random_f32({T, B, I}, 7, -1, 1);
  Tensor w = random_f32({2, 3 * H, I}, 8, -1, 1), r = random_f32({2, 3 * H, H}, 9, -1, 1);
  Tensor bias = random_f32({2, 6 * H}, 10, -1, 1), h0 = random_f32({2, B, H}, 11, -1, 1);
  Tensor lens = make_tensor<int32_t>(DataType::kInt32, {B}, {3, 1});
  Tensor xb = Tensor::allocate(DataType::kFloat32, {B, T, I}).value();
  Tensor h0b = Tensor::allocate(DataType::kFloat32, {B, 2, H}).value();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < I; ++k) xb.mutable_data<float>()[(b * T + t) * I + k] = x.data<float>()[(t * B + b) * I + k];
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k) h0b.mutable_data<float>()[(b * 2 + d) * H + k] = h0.data<float>()[(d * B + b) * H + k];
  auto node = NodeBuilder("GRU", 6, 2).s("direction", "bidirectional").node;
  auto y = run_op(node, 14, {&x, &w, &r, &bias, &lens, &h0}).value();
  auto yb = run_op(NodeBuilder("GRU", 6, 2).s("direction", "bidirectional").i("layout", 1).node, 14,
                   {&xb, &w, &r, &bias, &lens, &h0b}).value();
  ASSERT_EQ(yb[0].shape(), (Shape{B, T, 2, H}));
  ASSERT_EQ(yb[1].shape(), (Shape{B, 2, H}));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < H; ++k) {
          const float v = y[0].data<float>()[((t * 2 + d) * B + b) * H + k];
          EXPECT_EQ(v, yb[0].data<float>()[((b * T + t) * 2 + d) * H + k]);
          if (t >= lens.data<int32_t>()[b]) {
            EXPECT_EQ(v, 0.f) << "Y past the sequence length must be 0";
          }
        }
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k)
        EXPECT_EQ(y[1].data<float>()[(d * B + b) * H + k], yb[1].data<float>()[(b * 2 + d) * H + k]);
  // batch entry 1 has length 1: its forward Y_h is its Y at t = 0, its reverse Y_h too
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t k = 0; k < H; ++k)
      EXPECT_EQ(y[1].data<float>()[(d * B + 1) * H + k], y[0].data<float>()[((0 * 2 + d) * B + 1) * H + k]);
}

TEST(LSTM, Refusals) {
  Tensor x = random_f32({2, 1, 3}, 1), w = random_f32({1, 8, 3}, 2), r = random_f32({1, 8, 2}, 3);
  Tensor lens = make_tensor<int32_t>(DataType::kInt32, {1}, {3});
  auto e = run_op(NodeBuilder("LSTM", 5, 2).node, 14, {&x, &w, &r, nullptr, &lens});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().what.find("sequence_lens[0] = 3"), std::string::npos) << e.error().what;
  Tensor w_bad = random_f32({1, 6, 3}, 2);
  EXPECT_FALSE(run_op(NodeBuilder("LSTM", 3, 2).node, 14, {&x, &w_bad, &r}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("LSTM", 3).i("layout", 1).node, 13).ok());  // layout is opset 14+
  graph::Node acts = NodeBuilder("LSTM", 3).node;
  auto& a = acts.attributes["activations"];
  a.name = "activations";
  a.type = graph::AttrType::kStrings;
  a.strings = {"Sigmoid", "Tanh", "Gelu"};
  auto c = create_op(acts, 14);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().what.find("'Gelu'"), std::string::npos) << c.error().what;
  a.strings = {"Sigmoid", "Tanh"};
  EXPECT_FALSE(create_op(acts, 14).ok());
  EXPECT_FALSE(create_op(NodeBuilder("RNN", 3).s("direction", "sideways").node, 14).ok());
}

}  // namespace
}  // namespace glassbox::ops::testing
