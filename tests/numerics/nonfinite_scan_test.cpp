// The one non-finite scan (include/glassbox/numerics.h) on every float dtype, and its users:
// --check-numerics (runtime::make_numerics_checker) must stop at a node whose float16 or
// bfloat16 output overflowed, as it does for float32.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "glassbox/numerics.h"
#include "glassbox/session.h"
#include "glassbox/numerics_checker.h"
#include "test_models.h"

namespace glassbox {
namespace {

using rt_test::make_tensor;

TEST(NonFiniteScan, Float32FindsEachKindBeyondTheFirstBlock) {
  std::vector<float> v(1000, 1.5f);
  v[300] = std::numeric_limits<float>::quiet_NaN();
  v[301] = -std::numeric_limits<float>::quiet_NaN();  // a NaN with the sign bit is still NaN
  v[700] = std::numeric_limits<float>::infinity();
  v[999] = -std::numeric_limits<float>::infinity();
  v[5] = std::numeric_limits<float>::max();
  v[6] = std::numeric_limits<float>::denorm_min();
  const Tensor t = make_tensor(DataType::kFloat32, {1000}, v);
  EXPECT_EQ(first_non_finite(t), 300);
  const NonFiniteCounts c = count_non_finite(t);
  EXPECT_EQ(c.first, 300);
  EXPECT_EQ(c.nan, 2);
  EXPECT_EQ(c.pos_inf, 1);
  EXPECT_EQ(c.neg_inf, 1);
  EXPECT_EQ(c.total(), 4);
  EXPECT_EQ(non_finite_kind(t, 301), NonFiniteKind::kNaN);
  EXPECT_EQ(non_finite_kind(t, 999), NonFiniteKind::kNegInf);
  EXPECT_EQ(non_finite_kind(t, 5), NonFiniteKind::kFinite);
  EXPECT_STREQ(non_finite_kind_name(non_finite_kind(t, 700)), "+Inf");
}

TEST(NonFiniteScan, Float64) {
  std::vector<double> v(37, -2.0);
  v[36] = std::numeric_limits<double>::quiet_NaN();
  v[3] = std::numeric_limits<double>::max();
  const Tensor t = make_tensor(DataType::kFloat64, {37}, v);
  EXPECT_EQ(first_non_finite(t), 36);
  EXPECT_EQ(count_non_finite(t).nan, 1);
}

TEST(NonFiniteScan, Float16BitsAreReadAsFloat16) {
  // 0x7bff = 65504 (largest finite), 0x7c00 = +Inf, 0xfc00 = -Inf, 0x7e00 = NaN, 0xfd01 = NaN with sign
  const std::vector<uint16_t> v = {0x3c00, 0x7bff, 0x0001, 0x7c00, 0xfc00, 0x7e00, 0xfd01, 0xfbff};
  const Tensor t = make_tensor(DataType::kFloat16, {8}, v);
  EXPECT_EQ(first_non_finite(t), 3);
  const NonFiniteCounts c = count_non_finite(t);
  EXPECT_EQ(c.pos_inf, 1);
  EXPECT_EQ(c.neg_inf, 1);
  EXPECT_EQ(c.nan, 2);
}

TEST(NonFiniteScan, BFloat16BitsAreReadAsBFloat16) {
  // 0x7f7f = ~3.39e38 (largest finite), 0x7f80 = +Inf, 0xff80 = -Inf, 0x7fc0 = NaN; 0x7c00 is finite here
  const std::vector<uint16_t> v = {0x3f80, 0x7f7f, 0x7c00, 0xff7f, 0x7fc0, 0x7f80, 0xff80};
  const Tensor t = make_tensor(DataType::kBFloat16, {7}, v);
  EXPECT_EQ(first_non_finite(t), 4);
  const NonFiniteCounts c = count_non_finite(t);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.pos_inf, 1);
  EXPECT_EQ(c.neg_inf, 1);
}

TEST(NonFiniteScan, OtherDtypesHaveNone) {
  const Tensor i = make_tensor(DataType::kInt32, {2}, std::vector<int32_t>{0x7f800000, -1});
  EXPECT_EQ(first_non_finite(i), -1);
  EXPECT_EQ(count_non_finite(i).total(), 0);
  EXPECT_EQ(non_finite_kind(i, 0), NonFiniteKind::kFinite);
  const Tensor u = make_tensor(DataType::kUInt16, {1}, std::vector<uint16_t>{0x7c00});
  EXPECT_EQ(first_non_finite(u), -1);
  EXPECT_FALSE(dtype_has_non_finite(DataType::kUInt16));
  EXPECT_TRUE(dtype_has_non_finite(DataType::kBFloat16));
  EXPECT_EQ(first_non_finite(Tensor{}), -1);
}

// x (float32) -> Cast<to> named "narrow" -> y: 1e5 overflows float16, 3.4e38 overflows bfloat16.
std::string cast_model(const rt_test::TempDir& dir, int to) {
  auto m = rt_test::make_model();
  auto* g = m.mutable_graph();
  rt_test::add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
  rt_test::add_value(g->mutable_output(), "y", to, {2});
  rt_test::add_int_attr(rt_test::add_node(g, "Cast", {"x"}, {"y"}, "narrow"), "to", to);
  return rt_test::write_model(m, dir.file("cast" + std::to_string(to) + ".onnx"));
}

void expect_checker_names_cast(int to, float big, const char* dtype) {
  rt_test::TempDir dir;
  auto s = Session::load(cast_model(dir, to));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  auto fine = s->run({{"x", rt_test::float_tensor({2}, {1.f, 2.f})}});
  ASSERT_TRUE(fine.ok()) << fine.error().to_string();
  EXPECT_EQ(first_non_finite((*fine)[0].tensor), -1);
  auto plain = s->run({{"x", rt_test::float_tensor({2}, {1.f, big})}});
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  EXPECT_EQ(first_non_finite((*plain)[0].tensor), 1) << dtype;
  s->set_observer(runtime::make_numerics_checker());
  auto out = s->run({{"x", rt_test::float_tensor({2}, {1.f, big})}});
  ASSERT_FALSE(out.ok()) << dtype << ": the checker let an overflowed output through";
  const std::string e = out.error().to_string();
  EXPECT_NE(e.find("narrow"), std::string::npos) << e;
  EXPECT_NE(e.find(dtype), std::string::npos) << e;
  EXPECT_NE(e.find("+Inf) at element 1"), std::string::npos) << e;
  EXPECT_NE(e.find("this node created it"), std::string::npos) << e;
}

TEST(CheckNumerics, StopsAtAFloat16Overflow) { expect_checker_names_cast(onnx::TensorProto::FLOAT16, 1e5f, "float16"); }

TEST(CheckNumerics, StopsAtABFloat16Overflow) {
  expect_checker_names_cast(onnx::TensorProto::BFLOAT16, 3.4e38f, "bfloat16");
}

}  // namespace
}  // namespace glassbox
