// `glassbox probe` on image-like models (dynamic dims after dim 1): sizes that break the graph
// are found, and a gap pattern (only even sizes run) is told apart from a minimum size.
#include <gtest/gtest.h>

#include "diag/probe.h"
#include "model_builder.h"

using namespace glassbox;
using namespace glassbox::testing;

namespace {

onnx::AttributeProto ints_attr(const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a.add_ints(x);
  return a;
}

// x[N, 1, H, W] with H and W dynamic.
onnx::GraphProto* image_graph(onnx::ModelProto& m) {
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("n");
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_param("h");
  tt->mutable_shape()->add_dim()->set_dim_param("w");
  auto* y = g->add_output();
  y->set_name("y");
  auto* yt = y->mutable_type()->mutable_tensor_type();
  yt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"n", "c", "oh", "ow"}) yt->mutable_shape()->add_dim()->set_dim_param(d);
  return g;
}

const diag::ProbeCase* find_case(const diag::ProbeReport& r, const std::string& name) {
  for (const auto& c : r.cases)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(ProbeSpatial, MinimumSizeIsAWarning) {
  // MaxPool 4x4: sizes 1..3 cannot run, every size from 4 on can.
  auto m = make_model(14);
  auto* g = image_graph(m);
  add_node(g, "MaxPool", {"x"}, {"y"}, "pool")->add_attribute()->CopyFrom(ints_attr("kernel_shape", {4, 4}));
  TempDir dir;
  auto r = diag::probe_model(write_model(m, dir.file("m.onnx")), SessionOptions{}, diag::ProbeOptions{});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->ok()) << diag::probe_to_text(*r);
  const auto* c = find_case(*r, "spatial sizes 1..64 that run");
  ASSERT_NE(c, nullptr) << diag::probe_to_text(*r);
  EXPECT_EQ(c->status, diag::ProbeStatus::kWarn);
  EXPECT_NE(c->detail.find("every size from 4 on runs"), std::string::npos) << c->detail;
  EXPECT_EQ(find_case(*r, "dynamic dims >= 2 at 1")->status, diag::ProbeStatus::kWarn);
}

TEST(ProbeSpatial, OddSizesThatBreakAreAFailure) {
  // y = x + Resize(MaxPool2x2(x), 2x): odd sizes lose a row in the pool and the Add breaks.
  auto m = make_model(14);
  auto* g = image_graph(m);
  add_node(g, "MaxPool", {"x"}, {"pooled"}, "pool")->add_attribute()->CopyFrom(ints_attr("kernel_shape", {2, 2}));
  g->mutable_node(0)->add_attribute()->CopyFrom(ints_attr("strides", {2, 2}));
  add_float_initializer(g, "scales", {4}, {1, 1, 2, 2});
  auto* resize = add_node(g, "Resize", {"pooled", "", "scales"}, {"up"}, "upsample");
  onnx::AttributeProto mode;
  mode.set_name("mode");
  mode.set_type(onnx::AttributeProto::STRING);
  mode.set_s("nearest");
  resize->add_attribute()->CopyFrom(mode);
  add_node(g, "Add", {"x", "up"}, {"y"}, "skip_add");
  TempDir dir;
  auto r = diag::probe_model(write_model(m, dir.file("m.onnx")), SessionOptions{}, diag::ProbeOptions{});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(r->ok()) << diag::probe_to_text(*r);
  const auto* c = find_case(*r, "spatial sizes 1..64 that run");
  ASSERT_NE(c, nullptr) << diag::probe_to_text(*r);
  EXPECT_EQ(c->status, diag::ProbeStatus::kFail);
  EXPECT_NE(c->detail.find("32 of 64 run (2,4,6,8,"), std::string::npos) << c->detail;
  EXPECT_NE(c->detail.find("skip_add"), std::string::npos) << c->detail;
  EXPECT_EQ(find_case(*r, "dynamic dims >= 2 at 33")->status, diag::ProbeStatus::kFail);
  EXPECT_EQ(find_case(*r, "dynamic dims >= 2 at 32")->status, diag::ProbeStatus::kPass);
}

}  // namespace
