// CumSum, TopK, Trilu, Einsum, comparisons and unary integer ops vs small
// hand-computed or naive references.
#include <cmath>
#include <map>

#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

TEST(CumSum, ExclusiveReverseAxis) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor ax1 = make_tensor<int64_t>(DataType::kInt64, {}, {1}), ax0 = make_tensor<int32_t>(DataType::kInt32, {}, {-2});
  EXPECT_EQ(values(run_op(NodeBuilder("CumSum", 2).node, 14, {&x, &ax1}).value()[0]),
            (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(run_op(NodeBuilder("CumSum", 2).i("exclusive", 1).node, 14, {&x, &ax1}).value()[0]),
            (std::vector<float>{0, 1, 3, 0, 4, 9}));
  EXPECT_EQ(values(run_op(NodeBuilder("CumSum", 2).i("reverse", 1).node, 14, {&x, &ax1}).value()[0]),
            (std::vector<float>{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(values(run_op(NodeBuilder("CumSum", 2).node, 14, {&x, &ax0}).value()[0]),
            (std::vector<float>{1, 2, 3, 5, 7, 9}));
}

TEST(TopK, LargestSmallestTies) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {2, 4}, {1, 3, 3, 2, 0, -1, 5, 5});
  Tensor k = make_tensor<int64_t>(DataType::kInt64, {1}, {2});
  auto out = run_op(NodeBuilder("TopK", 2, 2).node, 11, {&x, &k}).value();
  EXPECT_EQ(values(out[0]), (std::vector<float>{3, 3, 5, 5}));
  EXPECT_EQ(std::vector<int64_t>(out[1].data<int64_t>(), out[1].data<int64_t>() + 4), (std::vector<int64_t>{1, 2, 2, 3}));
  auto small = run_op(NodeBuilder("TopK", 2, 2).i("largest", 0).i("axis", 0).node, 11, {&x, &k}).value();
  EXPECT_EQ(small[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(values(small[0]), (std::vector<float>{0, -1, 3, 2, 1, 3, 5, 5}));
}

TEST(Trilu, UpperLowerWithK) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(values(run_op(NodeBuilder("Trilu", 1).node, 14, {&x}).value()[0]),
            (std::vector<float>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  Tensor k = make_tensor<int64_t>(DataType::kInt64, {}, {-1});
  EXPECT_EQ(values(run_op(NodeBuilder("Trilu", 2).i("upper", 0).node, 14, {&x, &k}).value()[0]),
            (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

// Einsum vs a naive sum over all letter assignments.
std::vector<float> naive_einsum(const std::string& a, const std::string& b, const std::string& o, const Tensor& ta,
                                const Tensor& tb, std::map<char, int64_t> sz) {
  std::string letters;
  for (auto& [c, s] : sz) letters += c;
  int64_t on = 1;
  for (char c : o) on *= sz[c];
  std::vector<double> y(on, 0);
  std::map<char, int64_t> idx;
  for (char c : letters) idx[c] = 0;
  while (true) {
    auto off = [&](const std::string& t) {
      int64_t f = 0;
      for (char c : t) f = f * sz[c] + idx[c];
      return f;
    };
    y[off(o)] += double(ta.data<float>()[off(a)]) * (b.empty() ? 1.0 : tb.data<float>()[off(b)]);
    size_t p = letters.size();
    while (p-- > 0) {
      if (++idx[letters[p]] < sz[letters[p]]) break;
      idx[letters[p]] = 0;
    }
    if (p == static_cast<size_t>(-1)) break;
  }
  return {y.begin(), y.end()};
}

TEST(Einsum, TransformerFormsAndGeneral) {
  struct Case { std::string a, b, o; };
  const Case cases[] = {{"bij", "bjk", "bik"}, {"bhid", "bhjd", "bhij"}, {"bhij", "bhjd", "bhid"},
                        {"ij", "jk", "ki"}, {"ijk", "kj", "i"}, {"bi", "bj", "bij"}, {"ij", "", "ji"}, {"ijk", "", "j"}};
  std::map<char, int64_t> sz{{'b', 2}, {'h', 3}, {'i', 4}, {'j', 5}, {'k', 3}, {'d', 7}};
  uint32_t seed = 3;
  for (const auto& c : cases) {
    auto shape = [&](const std::string& t) {
      Shape s;
      for (char ch : t) s.push_back(sz[ch]);
      return s;
    };
    std::map<char, int64_t> used;
    for (char ch : c.a + c.b) used[ch] = sz[ch];
    Tensor ta = random_f32(shape(c.a), seed++), tb = random_f32(shape(c.b), seed++);
    const std::string eq = c.a + (c.b.empty() ? "" : "," + c.b) + "->" + c.o;
    auto node = NodeBuilder("Einsum", c.b.empty() ? 1 : 2).s("equation", eq).node;
    std::vector<const Tensor*> ins{&ta};
    if (!c.b.empty()) ins.push_back(&tb);
    auto out = run_op(node, 13, ins);
    ASSERT_TRUE(out.ok()) << eq << ": " << out.error().to_string();
    SCOPED_TRACE(eq);
    expect_close((*out)[0], naive_einsum(c.a, c.b, c.o, ta, tb, used), 1e-4f, 1e-4f);
  }
  EXPECT_FALSE(create_op(NodeBuilder("Einsum", 3).s("equation", "ij,jk,kl->il").node, 13).ok());
  Tensor sq = make_tensor<float>(DataType::kFloat32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto diag = run_op(NodeBuilder("Einsum", 1).s("equation", "ii->i").node, 13, {&sq}).value()[0];
  EXPECT_EQ(values(diag), (std::vector<float>{1, 5, 9}));
  auto trace = run_op(NodeBuilder("Einsum", 1).s("equation", "ii").node, 13, {&sq}).value()[0];
  EXPECT_EQ(values(trace), (std::vector<float>{15}));
}

TEST(Compare, IntAndFloat) {
  Tensor a = make_tensor<int64_t>(DataType::kInt64, {3}, {1, 2, 3}), b = make_tensor<int64_t>(DataType::kInt64, {}, {2});
  for (auto [op, want] : std::vector<std::pair<const char*, std::vector<bool>>>{
           {"Equal", {false, true, false}}, {"Less", {true, false, false}}, {"GreaterOrEqual", {false, true, true}}}) {
    auto y = run_op(NodeBuilder(op, 2).node, 13, {&a, &b}).value()[0];
    ASSERT_EQ(y.dtype(), DataType::kBool);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(y.data<bool>()[i], want[i]) << op << i;
  }
}

TEST(Unary, IntegerAbsNegSign) {
  Tensor x = make_tensor<int32_t>(DataType::kInt32, {3}, {-5, 0, 7});
  auto a = run_op(NodeBuilder("Abs", 1).node, 13, {&x}).value()[0];
  auto n = run_op(NodeBuilder("Neg", 1).node, 13, {&x}).value()[0];
  auto s = run_op(NodeBuilder("Sign", 1).node, 13, {&x}).value()[0];
  EXPECT_EQ(a.data<int32_t>()[0], 5);
  EXPECT_EQ(n.data<int32_t>()[2], -7);
  EXPECT_EQ(s.data<int32_t>()[0], -1);
  EXPECT_EQ(s.data<int32_t>()[1], 0);
}

}  // namespace
}  // namespace glassbox::ops::testing
