#include <gtest/gtest.h>

#include <cmath>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "test_context.h"

namespace glassbox::ops {
namespace {

TEST(DtypeDispatch, PicksTypeAndRefusesOthers) {
  DataType seen = DataType::kUndefined;
  auto f = [&]<class T>() -> Status {
    seen = dtype_of<T>();
    return {};
  };
  EXPECT_TRUE(dispatch_dtype<NumericTypes>(DataType::kInt32, "Test", f).ok());
  EXPECT_EQ(seen, DataType::kInt32);
  Status s = dispatch_dtype<FloatTypes>(DataType::kInt64, "Test", f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().what.find("float32, float64"), std::string::npos);
}

TEST(AttrUtil, DefaultsAndTypes) {
  testing::NodeBuilder b("X", 1);
  b.i("axis", -1).f("alpha", 0.5f);
  EXPECT_EQ(attr_int(b.node, "axis", 0).value(), -1);
  EXPECT_EQ(attr_int(b.node, "keepdims", 1).value(), 1);
  EXPECT_FALSE(attr_int(b.node, "alpha", 0).ok());
  EXPECT_FALSE(check_known_attrs(b.node, {"axis"}).ok());
  EXPECT_TRUE(check_known_attrs(b.node, {"axis", "alpha"}).ok());
  EXPECT_EQ(normalize_axis(-1, 3).value(), 2);
  EXPECT_FALSE(normalize_axis(3, 3).ok());
}

TEST(Half, RoundTrip) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 1e-3f}) {
    EXPECT_EQ(kernels::half_to_float(kernels::float_to_half(f)), kernels::half_to_float(kernels::float_to_half(
                                                                       kernels::half_to_float(kernels::float_to_half(f)))));
    EXPECT_NEAR(kernels::half_to_float(kernels::float_to_half(f)), f, std::fabs(f) * 1e-3 + 1e-7);
  }
  EXPECT_TRUE(std::isinf(kernels::half_to_float(kernels::float_to_half(70000.f))));
  EXPECT_TRUE(std::isnan(kernels::half_to_float(kernels::float_to_half(NAN))));
  EXPECT_EQ(kernels::bfloat16_to_float(kernels::float_to_bfloat16(1.5f)), 1.5f);
}

}  // namespace
}  // namespace glassbox::ops
