// TreeEnsemble (ai.onnx.ml 5) through the real registry: a hand-checked ensemble with set
// membership and NaN routing, in float and double (the expected rows are what onnxruntime-node
// 1.30 computes for the same model), and load-time errors naming the attribute. The library and
// synthetic models against onnxruntime are in ml_parity (scripts/ml/op_models.py v5_cases).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/registry.h"
#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

template <class T>
Tensor real(DataType dt, std::vector<T> v) {
  return make_tensor(dt, {static_cast<int64_t>(v.size())}, v);
}

// node 0: x0 in {1, 3} (NaN -> true) ? node 1 : leaf 0 (target 0, 10);
// node 1: x1 <= 0.5 ? leaf 1 (target 1, 20) : leaf 2 (target 0, 30).
std::vector<graph::Attribute> member_tree(DataType dt) {
  const float nan = std::nanf("");
  auto reals = [&](std::vector<double> v) {
    if (dt == DataType::kFloat64) return real(dt, v);
    return real(dt, std::vector<float>(v.begin(), v.end()));
  };
  return {attr_i("n_targets", 2),
          attr_is("tree_roots", {0}),
          attr_is("nodes_featureids", {0, 1}),
          attr_t("nodes_modes", make_tensor(DataType::kUInt8, {2}, std::vector<uint8_t>{6, 0})),
          attr_t("nodes_splits", reals({0, 0.5})),
          attr_is("nodes_truenodeids", {1, 1}),
          attr_is("nodes_trueleafs", {0, 1}),
          attr_is("nodes_falsenodeids", {0, 2}),
          attr_is("nodes_falseleafs", {1, 1}),
          attr_is("nodes_missing_value_tracks_true", {1, 0}),
          attr_t("membership_values", reals({1, 3, nan})),
          attr_is("leaf_targetids", {0, 1, 0}),
          attr_t("leaf_weights", reals({10, 20, 30}))};
}

graph::Node v5_node(std::vector<graph::Attribute> attrs) {
  graph::Node n = make_node("TreeEnsemble", std::move(attrs));
  n.domain = "ai.onnx.ml";
  n.domain_opset = 5;
  return n;
}

std::string load_error(std::vector<graph::Attribute> attrs) {
  auto op = ops::create_op(v5_node(std::move(attrs)), 17);
  return op.ok() ? std::string("loaded") : op.error().what;
}

// attrs with `a` replacing the attribute of its name, or added.
std::vector<graph::Attribute> with(std::vector<graph::Attribute> attrs, graph::Attribute a) {
  for (auto& x : attrs)
    if (x.name == a.name) {
      x = a;
      return attrs;
    }
  attrs.push_back(a);
  return attrs;
}

TEST(TreeEnsembleV5, MembershipAndNaNMatchOnnxRuntimeFloatAndDouble) {
  const float nan = std::nanf("");
  // rows (x0, x1); onnxruntime-node 1.30 on the same model: [0 20] [30 0] [10 0] [0 20] [10 0]
  const std::vector<float> x = {1, 0, 3, 1, 2, 0, nan, 0, 0, nan};
  const std::vector<double> want = {0, 20, 30, 0, 10, 0, 0, 20, 10, 0};
  {
    auto op = ops::create_op(v5_node(member_tree(DataType::kFloat32)), 17);
    ASSERT_TRUE(op.ok()) << op.error().what;
    TestContext ctx({f32({5, 2}, x)});
    ASSERT_TRUE(op.value()->compute(ctx).ok());
    EXPECT_EQ(to_vec(ctx.output(0)), std::vector<float>(want.begin(), want.end()));
    EXPECT_NE(op.value()->load_decision().find("sparse"), std::string::npos) << op.value()->load_decision();
  }
  {
    auto op = ops::create_op(v5_node(member_tree(DataType::kFloat64)), 17);
    ASSERT_TRUE(op.ok()) << op.error().what;
    TestContext ctx({make_tensor(DataType::kFloat64, {5, 2}, std::vector<double>(x.begin(), x.end()))});
    ASSERT_TRUE(op.value()->compute(ctx).ok());
    EXPECT_EQ(ctx.output(0).dtype(), DataType::kFloat64);
    EXPECT_EQ(to_vec_t<double>(ctx.output(0)), want);
    // float X into a double model: refused with the reason
    TestContext wrong({f32({5, 2}, x)});
    auto st = op.value()->compute(wrong);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().what.find("must be the attributes' type"), std::string::npos) << st.error().what;
  }
}

TEST(TreeEnsembleV5, AttributeErrorsNameTheProblem) {
  const auto base = member_tree(DataType::kFloat32);
  const float nan = std::nanf("");
  auto has = [](const std::string& got, const std::string& want) {
    return got.find(want) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "'" << got << "' lacks '" << want << "'";
  };
  // node 1's false child becomes node 0: a cycle
  EXPECT_TRUE(has(load_error(with(with(base, attr_is("nodes_falsenodeids", {0, 0})), attr_is("nodes_falseleafs", {1, 0}))),
                  "node 0 is reached twice"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("nodes_truenodeids", {4, 1}))), "true child 4 is out of range"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("nodes_falsenodeids", {3, 2}))), "false child 3 is out of range (leaf ids"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("tree_roots", {0, 1}))), "reached twice"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("nodes_featureids", {0}))), "nodes_featureids has 1 entries"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("nodes_modes", make_tensor(DataType::kUInt8, {2}, std::vector<uint8_t>{9, 0})))),
                  "nodes_modes = 9 is not a mode"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("membership_values", f32({2}, {1, 3})))), "not ended by a NaN"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("membership_values", f32({3}, {nan, 1, nan})))), "is empty"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("membership_values", f32({5}, {1, nan, 2, 3, nan})))),
                  "after the last BRANCH_MEMBER"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("nodes_trueleafs", {0, 3}))), "nodes_trueleafs[1] must be 0 or 1"));
  EXPECT_TRUE(has(load_error(with(base, attr_is("leaf_targetids", {0, 2, 0}))), "leaf_targetids = 2 is out of range"));
  EXPECT_TRUE(has(load_error(with(base, attr_i("aggregate_function", 7))), "aggregate_function 7"));
  EXPECT_TRUE(has(load_error(with(base, attr_i("post_transform", 4))), "PROBIT"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("leaf_weights", make_tensor(DataType::kFloat64, {3}, std::vector<double>{1, 2, 3})))),
                  "leaf_weights is float64 but nodes_splits is float32"));
  EXPECT_TRUE(has(load_error(with(base, attr_t("nodes_splits", make_tensor(DataType::kInt64, {2}, std::vector<int64_t>{0, 0})))),
                  "nodes_splits must be a float or double tensor"));
}

}  // namespace
}  // namespace glassbox::testing_nn
