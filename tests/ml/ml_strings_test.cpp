// String tensors and sequences of maps: the core storage rules (Tensor::strings), the ai.onnx.ml
// string ops through the real registry (CategoryMapper both ways, LabelEncoder string pairs with
// defaults, OneHotEncoder cats_strings, classlabels_strings, ZipMap), and their load-time errors.
// Parity with onnxruntime-node and scikit-learn is ml_parity (scripts/ml/string_models.py).
#include <gtest/gtest.h>

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

Tensor strs(Shape shape, std::vector<std::string> v) { return Tensor::strings(std::move(shape), std::move(v)).value(); }

std::vector<std::string> str_vec(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kString);
  const std::string* s = t.string_data();
  return s ? std::vector<std::string>(s, s + t.numel()) : std::vector<std::string>{};
}

std::string load_error(const graph::Node& n) {
  auto op = ops::create_op(n, 17);
  return op.ok() ? std::string("loaded") : op.error().what;
}

// Runs node on inputs; returns the context (outputs) or fails the test.
std::unique_ptr<TestContext> run(const graph::Node& node, std::vector<Tensor> inputs, size_t n_out = 1) {
  auto op = ops::create_op(node, 17);
  EXPECT_TRUE(op.ok()) << op.error().what;
  auto ctx = std::make_unique<TestContext>(std::move(inputs), n_out);
  if (op.ok()) {
    Status st = op.value()->compute(*ctx);
    EXPECT_TRUE(st.ok()) << st.error().what;
  }
  return ctx;
}

TEST(StringTensor, StorageIsStringsNeverBytes) {
  Tensor t = strs({2, 2}, {"a", "", "Zürich", "東京"});
  EXPECT_EQ(t.dtype(), DataType::kString);
  EXPECT_EQ(t.nbytes(), 0u);     // no byte layout
  EXPECT_FALSE(t.writable());    // immutable once made
  EXPECT_EQ(str_vec(t)[3], "東京");
  // Reshapes are views of the same strings; slices and reinterpretations are refused.
  auto r = t.reshaped({4});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->string_data(), t.string_data());
  EXPECT_FALSE(Tensor::view(DataType::kString, {2}, t.buffer(), 0).ok());
  EXPECT_FALSE(Tensor::view(DataType::kFloat32, {1}, t.buffer(), 0).ok());
  EXPECT_FALSE(Tensor::view(DataType::kString, {1}, make_owned_buffer(64), 0).ok());
  // Byte allocation refuses strings: a numeric kernel cannot make one.
  EXPECT_FALSE(Tensor::allocate(DataType::kString, {2}).ok());
  // clone copies the strings.
  auto c = t.clone();
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->string_data(), t.string_data());
  EXPECT_EQ(str_vec(*c), str_vec(t));
  // Element count must match the shape.
  EXPECT_FALSE(Tensor::strings({3}, {"a"}).ok());
  EXPECT_EQ(Tensor().string_data(), nullptr);
}

TEST(StringOps, CategoryMapperBothDirections) {
  auto node = ml_node("CategoryMapper", {attr_ss("cats_strings", {"red", "green", "blue"}), attr_is("cats_int64s", {7, 8, 9}),
                                         attr_i("default_int64", -5), attr_s("default_string", "none")});
  auto to_int = run(node, {strs({2, 2}, {"blue", "red", "purple", ""})});
  EXPECT_EQ(to_vec_t<int64_t>(to_int->output(0)), (std::vector<int64_t>{9, 7, -5, -5}));
  EXPECT_EQ(to_int->output(0).shape(), (Shape{2, 2}));
  auto to_str = run(node, {i64({3}, {8, 1, 7})});
  EXPECT_EQ(str_vec(to_str->output(0)), (std::vector<std::string>{"green", "none", "red"}));
  // Spec defaults.
  auto plain = ml_node("CategoryMapper", {attr_ss("cats_strings", {"a"}), attr_is("cats_int64s", {1})});
  EXPECT_EQ(to_vec_t<int64_t>(run(plain, {strs({1}, {"b"})})->output(0)), (std::vector<int64_t>{-1}));
  EXPECT_EQ(str_vec(run(plain, {i64({1}, {2})})->output(0)), (std::vector<std::string>{"_Unused"}));
}

TEST(StringOps, LabelEncoderStringPairsAndDefaults) {
  auto s2i = ml_node("LabelEncoder", {attr_ss("keys_strings", {"a", "b", "a"}), attr_is("values_int64s", {1, 2, 3})});
  // First occurrence wins; spec default -1.
  EXPECT_EQ(to_vec_t<int64_t>(run(s2i, {strs({3}, {"a", "b", "c"})})->output(0)), (std::vector<int64_t>{1, 2, -1}));
  auto i2s = ml_node("LabelEncoder", {attr_is("keys_int64s", {4, 5}), attr_ss("values_strings", {"four", "five"}),
                                      attr_s("default_string", "?")});
  EXPECT_EQ(str_vec(run(i2s, {i64({3}, {5, 6, 4})})->output(0)), (std::vector<std::string>{"five", "?", "four"}));
  auto s2f = ml_node("LabelEncoder", {attr_ss("keys_strings", {"x"}), attr_fs("values_floats", {2.5f})});
  EXPECT_EQ(to_vec(run(s2f, {strs({2}, {"x", "y"})})->output(0))[0], 2.5f);
  auto s2s = ml_node("LabelEncoder", {attr_ss("keys_strings", {"x"}), attr_ss("values_strings", {"X"})});
  EXPECT_EQ(str_vec(run(s2s, {strs({2}, {"x", "y"})})->output(0)), (std::vector<std::string>{"X", "_Unused"}));
}

TEST(StringOps, OneHotEncoderStringCategories) {
  auto node = ml_node("OneHotEncoder", {attr_ss("cats_strings", {"S", "M", "L"})});
  auto ctx = run(node, {strs({2, 1}, {"L", "XL"})});
  EXPECT_EQ(ctx->output(0).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(to_vec(ctx->output(0)), (std::vector<float>{0, 0, 1, 0, 0, 0}));
  // zeros = 0: an unknown category is an error naming it.
  auto strict = ml_node("OneHotEncoder", {attr_ss("cats_strings", {"S"}), attr_i("zeros", 0)});
  auto op = ops::create_op(strict, 17);
  ASSERT_TRUE(op.ok());
  TestContext c({strs({1}, {"M"})});
  Status st = op.value()->compute(c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().what.find("'M'"), std::string::npos) << st.error().what;
}

TEST(StringOps, LinearClassifierStringLabels) {
  auto node = ml_node("LinearClassifier", {attr_fs("coefficients", {1, 0, 0, 1, -1, -1}), attr_fs("intercepts", {0, 0, 0}),
                                           attr_ss("classlabels_strings", {"cat", "dog", "bird"})},
                      2);
  auto ctx = run(node, {f32({3, 2}, {2, 1, 0, 3, -2, -2})}, 2);
  EXPECT_EQ(str_vec(ctx->output(0)), (std::vector<std::string>{"cat", "dog", "bird"}));
  EXPECT_EQ(ctx->output(1).shape(), (Shape{3, 3}));
}

TEST(StringOps, ZipMapKeepsKeysOnceAndValuesAsGiven) {
  auto node = ml_node("ZipMap", {attr_ss("classlabels_strings", {"no", "yes"})});
  auto ctx = run(node, {f32({2, 2}, {0.25f, 0.75f, 1.f, 0.f})});
  EXPECT_EQ(str_vec(ctx->map_keys()), (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(to_vec(ctx->output(0)), (std::vector<float>{0.25f, 0.75f, 1.f, 0.f}));
  auto ints = ml_node("ZipMap", {attr_is("classlabels_int64s", {3, 1, 2})});
  auto c2 = run(ints, {f32({3}, {0.5f, 0.25f, 0.25f})});
  EXPECT_EQ(to_vec_t<int64_t>(c2->map_keys()), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(c2->output(0).shape(), (Shape{1, 3}));  // [C] is one row
  // Column count must match the labels.
  auto op = ops::create_op(node, 17);
  TestContext bad({f32({1, 3}, {0, 0, 0})});
  EXPECT_FALSE(op.value()->compute(bad).ok());
}

TEST(StringOps, LoadErrorsNameTheAttribute) {
  EXPECT_NE(load_error(ml_node("CategoryMapper", {attr_ss("cats_strings", {"a", "b"}), attr_is("cats_int64s", {1})}))
                .find("equal length"), std::string::npos);
  EXPECT_NE(load_error(ml_node("CategoryMapper", {})).find("non-empty"), std::string::npos);
  EXPECT_NE(load_error(ml_node("CategoryMapper", {attr_ss("cats_strings", {"a", "b"}), attr_is("cats_int64s", {1, 1})}))
                .find("cats_int64s lists 1 twice"), std::string::npos);
  EXPECT_NE(load_error(ml_node("LabelEncoder", {attr_ss("keys_strings", {"a", "b"}), attr_is("values_int64s", {1})}))
                .find("one value per key"), std::string::npos);
  EXPECT_NE(load_error(ml_node("LabelEncoder", {attr_ss("keys_strings", {"a"}), attr_is("values_int64s", {1}),
                                                attr_f("default_float", 1.f)}))
                .find("default_float is given but the values are int64"), std::string::npos);
  EXPECT_NE(load_error(ml_node("LabelEncoder", {attr_ss("keys_strings", {"a"})})).find("exactly one of values"),
            std::string::npos);
  EXPECT_NE(load_error(ml_node("OneHotEncoder", {attr_ss("cats_strings", {"a"}), attr_is("cats_int64s", {1})}))
                .find("exactly one of cats_int64s and cats_strings"), std::string::npos);
  EXPECT_NE(load_error(ml_node("ZipMap", {attr_ss("classlabels_strings", {"a"}), attr_is("classlabels_int64s", {1})}))
                .find("exactly one"), std::string::npos);
  EXPECT_NE(load_error(ml_node("SVMClassifier", {attr_ss("classlabels_strings", {"a", "b"}), attr_is("classlabels_ints", {1, 2})}, 2))
                .find("both given"), std::string::npos);
}

TEST(StringOps, StringOpsListIsConsistentWithTheRegistry) {
  // Every op that may take strings is a supported op; numeric ops are not on the list.
  for (const auto& s : ops::string_ops())
    EXPECT_TRUE(ops::is_supported(s.domain, s.op_type, std::string(s.domain).empty() ? 17 : 3)) << s.op_type;
  EXPECT_TRUE(ops::takes_strings("ai.onnx.ml", "CategoryMapper"));
  EXPECT_TRUE(ops::takes_strings("ai.onnx", "Identity"));
  EXPECT_FALSE(ops::takes_strings("", "Add"));
  EXPECT_FALSE(ops::takes_strings("ai.onnx.ml", "LinearClassifier"));
}

}  // namespace
}  // namespace glassbox::testing_nn
