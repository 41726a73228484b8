// ai.onnx.ml ops through the real registry (ops::create_op): load-time validation
// errors, a hand-computed ensemble (NaN routing both ways), and that every op in
// ml_ops.inc has a parity case in scripts/ml/.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "ops/registry.h"
#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

graph::Attribute attr_ss(const std::string& name, std::vector<std::string> v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}

graph::Node ml_node(const std::string& op, std::vector<graph::Attribute> attrs, size_t n_out = 1) {
  graph::Node n = make_node(op, std::move(attrs), n_out);
  n.domain = "ai.onnx.ml";
  n.domain_opset = 3;
  return n;
}

// Tree 0: x[1] <= 0.5 (NaN -> true) ? leaf 1 (w 10) : leaf 2 (w 20);  tree 1: x[0] < 2 (NaN -> false) ? 1 : 2.
std::vector<graph::Attribute> two_trees() {
  return {attr_is("nodes_treeids", {0, 0, 0, 1, 1, 1}),    attr_is("nodes_nodeids", {0, 1, 2, 0, 1, 2}),
          attr_is("nodes_featureids", {1, 0, 0, 0, 0, 0}), attr_fs("nodes_values", {0.5f, 0, 0, 2.f, 0, 0}),
          attr_ss("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"}),
          attr_is("nodes_truenodeids", {1, 0, 0, 1, 0, 0}), attr_is("nodes_falsenodeids", {2, 0, 0, 2, 0, 0}),
          attr_is("nodes_missing_value_tracks_true", {1, 0, 0, 0, 0, 0}),
          attr_is("target_treeids", {0, 0, 1, 1}),         attr_is("target_nodeids", {1, 2, 1, 2}),
          attr_is("target_ids", {0, 0, 0, 0}),             attr_fs("target_weights", {10, 20, 1, 2})};
}

std::string load_error(const graph::Node& n) {
  auto op = ops::create_op(n, 17);
  return op.ok() ? std::string("loaded") : op.error().what + " | " + op.error().where;
}

TEST(MlOps, HandComputedEnsembleRoutesNaNBothWays) {
  auto attrs = two_trees();
  attrs.push_back(attr_fs("base_values", {0.25f}));
  auto op = ops::create_op(ml_node("TreeEnsembleRegressor", attrs), 17);
  ASSERT_TRUE(op.ok()) << op.error().what;
  const float nan = std::nanf("");
  // rows: (x0, x1)
  TestContext ctx({f32({4, 2}, {1.f, 0.5f, 2.f, 0.6f, nan, nan, 3.f, -1.f})});
  ASSERT_TRUE(op.value()->compute(ctx).ok());
  // row 0: 0.5<=0.5 -> 10; 1<2 -> 1.  row 1: 0.6 -> 20; 2<2 false -> 2.  row 2: NaN -> 10 (tracks true); NaN -> 2.
  // row 3: -1 -> 10; 3 -> 2.
  EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{11.25f, 22.25f, 12.25f, 12.25f}));
  // The two trees use different modes (LEQ, LT): one branch mode is what the complete layout needs.
  EXPECT_NE(op.value()->load_decision().find("sparse"), std::string::npos) << op.value()->load_decision();
}

TEST(MlOps, TreeAttributeErrorsNameTheProblem) {
  auto with = [](const std::string& key, graph::Attribute a) {
    auto attrs = two_trees();
    for (auto& x : attrs)
      if (x.name == key) x = std::move(a);
    return ml_node("TreeEnsembleRegressor", attrs);
  };
  EXPECT_NE(load_error(with("nodes_truenodeids", attr_is("nodes_truenodeids", {1, 0, 0, 5, 0, 0}))).find("child id 5 is out of range"),
            std::string::npos);
  EXPECT_NE(load_error(with("nodes_falsenodeids", attr_is("nodes_falsenodeids", {0, 0, 0, 2, 0, 0}))).find("a cycle"),
            std::string::npos);
  EXPECT_NE(load_error(with("nodes_modes", attr_ss("nodes_modes", {"BRANCH_LEQ", "LEAF"}))).find("nodes_modes has 2 entries"),
            std::string::npos);
  EXPECT_NE(load_error(with("target_nodeids", attr_is("target_nodeids", {0, 2, 1, 2}))).find("LEAF"), std::string::npos);
  auto bad_tensor = two_trees();
  bad_tensor.push_back(attr_t("nodes_values_as_tensor", f32({6}, {})));
  EXPECT_NE(load_error(ml_node("TreeEnsembleRegressor", bad_tensor)).find("double-precision"), std::string::npos);
}

TEST(MlOps, RefusedOpsSayWhy) {
  EXPECT_NE(load_error(ml_node("DictVectorizer", {}, 1)).find("no map inputs"), std::string::npos);
  auto n = ml_node("Scaler", {});
  n.domain_opset = 5;
  EXPECT_NE(load_error(n).find("not at this opset"), std::string::npos);
  EXPECT_NE(load_error(ml_node("NoSuchMlOp", {})).find("not implemented"), std::string::npos);
}

TEST(MlOps, EveryRegisteredOpHasAParityCase) {
  std::string scripts;
  for (const char* f : {"/scripts/ml/op_models.py", "/scripts/ml/library_models.py", "/scripts/ml/convert.py"}) {
    std::ifstream in(std::string(GLASSBOX_SOURCE_DIR) + f);
    ASSERT_TRUE(in.good()) << f;
    std::stringstream ss;
    ss << in.rdbuf();
    scripts += ss.str();
  }
  ASSERT_FALSE(ops::supported_ml_ops().empty());
  for (const auto& op : ops::supported_ml_ops())
    EXPECT_NE(scripts.find("\"" + std::string(op.op_type) + "\""), std::string::npos)
        << op.op_type << " has no model in scripts/ml/ (parity with onnxruntime is required for every op)";
}

}  // namespace
}  // namespace glassbox::testing_nn
