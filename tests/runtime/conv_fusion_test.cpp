// conv_epilogue_fusion: Conv + per-channel affine (Mul/Add/Sub/Div, BatchNormalization) + activation (Relu, Clip,
// HardSigmoid, Sigmoid, HardSwish, Paddle2ONNX's Add/Clip/Mul/Div hardswish) becomes one glassbox::FusedConv.
// Each case: outputs at opt level 2 equal level 0 (the graph as written) within 1e-5 of the output's scale, on two
// input shapes (oneDNN's gemm-based and direct/depthwise convolutions both), and the pass fired as many times as
// the case expects (0 where fusing would lose a value something else reads).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "glassbox/session.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * std::sin(0.7f * static_cast<float>(i) + 0.3f);
  return v;
}

struct ConvModel {
  onnx::ModelProto m = make_model(14);
  onnx::GraphProto* g = m.mutable_graph();
  int64_t c_in = 4, c_out = 8, group = 1;
  // Conv x -> "y" (3x3, pads 1; bias when `bias`).
  ConvModel(int64_t cin, int64_t cout, int64_t grp, bool bias) : c_in(cin), c_out(cout), group(grp) {
    add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {-1, cin, -1, -1}, {"n", "", "h", "w"});
    onnx_builder::add_float_initializer(g, "W", {cout, cin / grp, 3, 3}, ramp(static_cast<size_t>(cout * cin / grp * 9), 0.4f, 0.f));
    std::vector<std::string> in = {"x", "W"};
    if (bias) {
      onnx_builder::add_float_initializer(g, "B", {cout}, ramp(static_cast<size_t>(cout), 0.3f, 0.1f));
      in.push_back("B");
    }
    auto* conv = add_node(g, "Conv", in, {"y"});
    add_ints_attr(conv, "pads", {1, 1, 1, 1});
    add_int_attr(conv, "group", grp);
  }
  std::string channel_const(const std::string& name, float scale, float offset) {
    onnx_builder::add_float_initializer(g, name, {1, c_out, 1, 1}, ramp(static_cast<size_t>(c_out), scale, offset));
    return name;
  }
  std::string scalar(const std::string& name, float v) {
    onnx_builder::add_float_initializer(g, name, {}, {v});
    return name;
  }
  void output(const std::string& name) { add_value(g->mutable_output(), name, onnx::TensorProto::FLOAT, {-1, c_out, -1, -1}); }
};

// Runs the model at levels 0 and 2 on two shapes; returns how often the pass fired at level 2.
int check_against_level_zero(const ConvModel& cm, const std::string& label) {
  TempDir dir;
  const std::string path = write_model(cm.m, dir.file("m.onnx"));
  SessionOptions o0, o2;
  o0.opt_level = 0;
  o2.opt_level = 2;
  o0.threads = o2.threads = 2;
  auto s0 = Session::load(path, o0);
  auto s2 = Session::load(path, o2);
  EXPECT_TRUE(s0.ok() && s2.ok()) << label << ": " << (s0.ok() ? s2.error().to_string() : s0.error().to_string());
  if (!s0.ok() || !s2.ok()) return -1;
  for (const Shape& shape : {Shape{1, cm.c_in, 5, 7}, Shape{2, cm.c_in, 24, 40}}) {
    const Tensor x = float_tensor(shape, ramp(static_cast<size_t>(shape[0] * shape[1] * shape[2] * shape[3]), 2.f, 0.f));
    auto ref = s0->run({{"x", x}});
    auto got = s2->run({{"x", x}});
    EXPECT_TRUE(ref.ok() && got.ok()) << label;
    if (!ref.ok() || !got.ok()) return -1;
    for (size_t k = 0; k < ref->size(); ++k) {
      const auto a = values_of<float>((*ref)[k].tensor), b = values_of<float>((*got)[k].tensor);
      EXPECT_EQ(a.size(), b.size()) << label;
      double diff = 0, scale = 1e-6;
      for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        diff = std::max(diff, std::fabs(double(a[i]) - b[i])), scale = std::max(scale, std::fabs(double(a[i])));
      EXPECT_LE(diff / scale, 1e-5) << label << " output " << k << " at " << shape_to_string(shape);
    }
  }
  int fired = 0;
  for (const auto& e : s2->pass_log()) fired += e.pass == "conv_epilogue_fusion";
  return fired;
}

TEST(ConvEpilogueFusion, PaddleAffineAndHardSwishBecomeOneConv) {
  ConvModel cm(4, 8, 1, false);  // PP-OCR's form: Conv without bias, Mul/Add, then Add/Clip/Mul/Div hardswish
  add_node(cm.g, "Mul", {"y", cm.channel_const("s", 0.5f, 1.f)}, {"y1"});
  add_node(cm.g, "Add", {"y1", cm.channel_const("t", 0.7f, 0.f)}, {"y2"});
  add_node(cm.g, "Add", {"y2", cm.scalar("three", 3.f)}, {"a"});
  add_node(cm.g, "Clip", {"a", cm.scalar("zero", 0.f), cm.scalar("six", 6.f)}, {"c"});
  add_node(cm.g, "Mul", {"y2", "c"}, {"m"});
  add_node(cm.g, "Div", {"m", "six"}, {"out"});
  cm.output("out");
  EXPECT_EQ(check_against_level_zero(cm, "conv+mul+add+hardswish"), 1);
}

TEST(ConvEpilogueFusion, BatchNormAndEachActivation) {
  for (const char* act : {"Relu", "Sigmoid", "HardSigmoid", "HardSwish", "Clip"}) {
    ConvModel cm(4, 8, 1, true);
    for (const char* n : {"gamma", "beta", "mean"}) onnx_builder::add_float_initializer(cm.g, n, {8}, ramp(8, 0.5f, 0.2f));
    onnx_builder::add_float_initializer(cm.g, "var", {8}, ramp(8, 0.2f, 0.5f));
    add_node(cm.g, "BatchNormalization", {"y", "gamma", "beta", "mean", "var"}, {"bn"});
    std::vector<std::string> in = {"bn"};
    if (std::string(act) == "Clip") in = {"bn", cm.scalar("lo", -0.5f), cm.scalar("hi", 0.8f)};
    auto* a = add_node(cm.g, act, in, {"out"});
    if (std::string(act) == "HardSigmoid") {
      auto* at = a->add_attribute();
      at->set_name("alpha");
      at->set_type(onnx::AttributeProto::FLOAT);
      at->set_f(0.25f);
    }
    cm.output("out");
    EXPECT_EQ(check_against_level_zero(cm, std::string("conv+bn+") + act), 1) << act;
  }
}

TEST(ConvEpilogueFusion, DepthwiseWithSubDivAndHardSwish) {
  ConvModel cm(8, 8, 8, true);  // depthwise: oneDNN's blocked kernel, the activation as a post-op
  add_node(cm.g, "Sub", {"y", cm.channel_const("m", 0.3f, 0.f)}, {"y1"});
  add_node(cm.g, "Div", {"y1", cm.channel_const("d", 0.2f, 1.f)}, {"y2"});
  add_node(cm.g, "HardSwish", {"y2"}, {"out"});
  cm.output("out");
  EXPECT_EQ(check_against_level_zero(cm, "depthwise+sub+div+hardswish"), 1);
}

TEST(ConvEpilogueFusion, AValueReadElsewhereIsNotSwallowed) {
  ConvModel cm(4, 8, 1, true);  // y also feeds a second output: the Mul cannot be folded, nor the Relu taken
  add_node(cm.g, "Mul", {"y", cm.channel_const("s", 0.5f, 1.f)}, {"y1"});
  add_node(cm.g, "Relu", {"y1"}, {"out"});
  add_node(cm.g, "Neg", {"y"}, {"other"});
  cm.output("out");
  cm.output("other");
  EXPECT_EQ(check_against_level_zero(cm, "shared conv output"), 0);
  ConvModel cm2(4, 8, 1, true);  // a Mul by a per-width (not per-channel) vector is not an affine of the channels
  onnx_builder::add_float_initializer(cm2.g, "wv", {7}, ramp(7, 0.5f, 1.f));
  add_node(cm2.g, "Mul", {"y", "wv"}, {"out"});
  cm2.output("out");
  TempDir dir;
  SessionOptions o;
  o.opt_level = 2;
  auto s = Session::load(write_model(cm2.m, dir.file("m.onnx")), o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  for (const auto& e : s->pass_log()) EXPECT_NE(e.pass, "conv_epilogue_fusion") << e.message;
}

}  // namespace
}  // namespace glassbox::rt_test
