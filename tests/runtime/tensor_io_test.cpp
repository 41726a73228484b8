#include <gtest/gtest.h>

#include "glassbox/conformance.h"
#include "glassbox/tensor_io.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

TEST(TensorIo, NpyRoundTripKeepsDtypeShapeAndBytes) {
  TempDir dir;
  Tensor t = make_tensor<int64_t>(DataType::kInt64, {2, 3}, {1, -2, 3, 4, 5, 6});
  ASSERT_TRUE(runtime::write_npy(dir.file("a.npy"), t).ok());
  auto back = runtime::read_npy(dir.file("a.npy"));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->dtype(), DataType::kInt64);
  EXPECT_EQ(back->shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<int64_t>(*back), (std::vector<int64_t>{1, -2, 3, 4, 5, 6}));
}

TEST(TensorIo, NpyScalarAndOneDim) {
  TempDir dir;
  for (const Shape& s : {Shape{}, Shape{3}}) {
    Tensor t = float_tensor(s, std::vector<float>(s.empty() ? 1 : 3, 2.5f));
    ASSERT_TRUE(runtime::write_npy(dir.file("s.npy"), t).ok());
    auto back = runtime::read_npy(dir.file("s.npy"));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->shape(), s);
  }
}

TEST(TensorIo, PbRoundTrip) {
  TempDir dir;
  Tensor t = float_tensor({2, 2}, {1.f, 2.f, 3.f, 4.f});
  ASSERT_TRUE(runtime::write_tensor_pb(dir.file("t.pb"), t, "x").ok());
  auto back = runtime::read_tensor_file(dir.file("t.pb"));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->name, "x");
  EXPECT_EQ(runtime::compare_tensors(back->tensor, t, 0, 0), "");
}

TEST(TensorIo, TruncatedNpyIsAClearError) {
  TempDir dir;
  Tensor t = float_tensor({4}, {1, 2, 3, 4});
  ASSERT_TRUE(runtime::write_npy(dir.file("a.npy"), t).ok());
  std::filesystem::resize_file(dir.file("a.npy"), std::filesystem::file_size(dir.file("a.npy")) - 4);
  auto back = runtime::read_npy(dir.file("a.npy"));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().what.find("needs 16"), std::string::npos) << back.error().to_string();
}

TEST(TensorIo, GarbagePbIsAClearError) {
  TempDir dir;
  std::ofstream(dir.file("bad.pb")) << "\xff\xff\xff not a proto";
  auto back = runtime::read_tensor_file(dir.file("bad.pb"));
  EXPECT_FALSE(back.ok());
}

TEST(Compare, ToleranceNanAndInf) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor e = float_tensor({4}, {1.f, nan, inf, 100.f});
  EXPECT_EQ(runtime::compare_tensors(float_tensor({4}, {1.f, nan, inf, 100.05f}), e, 1e-3, 1e-7), "");
  EXPECT_NE(runtime::compare_tensors(float_tensor({4}, {1.f, 0.f, inf, 100.f}), e, 1e-3, 1e-7), "");
  EXPECT_NE(runtime::compare_tensors(float_tensor({4}, {1.f, nan, -inf, 100.f}), e, 1e-3, 1e-7), "");
  EXPECT_NE(runtime::compare_tensors(float_tensor({4}, {1.f, nan, inf, 100.2f}), e, 1e-3, 1e-7), "");
  EXPECT_NE(runtime::compare_tensors(float_tensor({2, 2}, {1.f, nan, inf, 100.f}), e, 1e-3, 1e-7), "");
}

TEST(Exclusions, EveryEntryNeedsAReason) {
  TempDir dir;
  std::ofstream(dir.file("ok.txt")) << "# comment\ntest_a  op A not implemented\n\ntest_b string tensors\n";
  auto ok = runtime::read_exclusion_file(dir.file("ok.txt"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_EQ(ok->at("test_a"), "op A not implemented");
  std::ofstream(dir.file("bad.txt")) << "test_a\n";
  EXPECT_FALSE(runtime::read_exclusion_file(dir.file("bad.txt")).ok());
}

}  // namespace
}  // namespace glassbox::rt_test
