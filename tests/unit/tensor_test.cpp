#include <gtest/gtest.h>

#include "glassbox/tensor.h"

using namespace glassbox;

TEST(Tensor, AllocateZeroFilledAndAligned) {
  auto t = Tensor::allocate(DataType::kFloat32, {3, 5});
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->numel(), 15);
  EXPECT_EQ(t->nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw()) % 64, 0u);
  for (int i = 0; i < 15; ++i) EXPECT_EQ(t->data<float>()[i], 0.f);
}

TEST(Tensor, NegativeAndOverflowingShapesAreErrors) {
  auto neg = Tensor::allocate(DataType::kFloat32, {2, -1});
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.error().what.find("negative"), std::string::npos);
  auto big = Tensor::allocate(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kLimitExceeded);
}

TEST(Tensor, ViewChecksBufferBounds) {
  auto buf = make_owned_buffer(16);
  EXPECT_TRUE(Tensor::view(DataType::kFloat32, {4}, buf, 0).ok());
  EXPECT_FALSE(Tensor::view(DataType::kFloat32, {4}, buf, 4).ok());
  EXPECT_FALSE(Tensor::view(DataType::kFloat32, {5}, buf, 0).ok());
}

TEST(Tensor, ReshapeKeepsStorageAndChecksCount) {
  auto t = Tensor::allocate(DataType::kInt64, {2, 3});
  ASSERT_TRUE(t.ok());
  auto r = t->reshaped({3, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->raw(), t->raw());
  EXPECT_FALSE(t->reshaped({4}).ok());
}
