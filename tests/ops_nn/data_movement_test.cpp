// How to add an op test: build a node with make_node(op, attrs), a TestContext
// with the inputs (and a byte cap for shape-bomb tests), run_op(node, opset, ctx),
// then compare ctx.output(i) with a reference computed here.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/data_movement.h"
#include "test_context.h"

namespace glassbox::testing_nn {
namespace {

TEST(StridedCopy, MatchesReferenceOnAwkwardShapes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(rank), strides(rank);
    int64_t span = 1;
    for (int d = 0; d < rank; ++d) shape[d] = static_cast<int64_t>(rng() % 5);  // includes 0 and 1
    for (int d = rank - 1; d >= 0; --d) {
      const int kind = static_cast<int>(rng() % 4);
      strides[d] = kind == 0 ? 0 : (kind == 1 ? -span : span);
      span *= std::max<int64_t>(1, shape[d]) + 1;
    }
    // Base pointer in the middle so negative strides stay inside.
    // Room for the largest element size on both sides of the base.
    std::vector<uint32_t> src(static_cast<size_t>(2 * span + 1) * 2);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(rng());
    int64_t n = 1;
    for (auto s : shape) n *= s;
    for (size_t es : {size_t{1}, size_t{4}, size_t{8}}) {
      std::vector<uint8_t> a(static_cast<size_t>(n) * es + 1, 0), b(a.size(), 0);
      const char* base = reinterpret_cast<const char*>(src.data()) + (span * es);
      ThreadPool pool(3);
      kernels::strided_copy(es, rank, shape.data(), base, strides.data(), a.data(), &pool);
      kernels::strided_copy_reference(es, rank, shape.data(), base, strides.data(), b.data());
      ASSERT_EQ(a, b) << "trial " << trial << " elem " << es;
    }
  }
}

TEST(StridedCopy, TiledTransposeMatchesReference) {
  // Permutations of odd, larger shapes reach the 32x32 tiled path.
  const std::vector<std::vector<int64_t>> shapes = {{37, 41}, {3, 33, 65}, {2, 5, 17, 40}, {1, 64, 9, 8}};
  std::mt19937 rng(77);
  for (const auto& in_shape : shapes) {
    const int r = static_cast<int>(in_shape.size());
    std::vector<int64_t> in_strides(r);
    int64_t n = 1;
    for (int d = r - 1; d >= 0; --d) {
      in_strides[d] = n;
      n *= in_shape[d];
    }
    std::vector<uint32_t> src(static_cast<size_t>(n));
    for (auto& v : src) v = static_cast<uint32_t>(rng());
    std::vector<int> perm(r);
    for (int i = 0; i < r; ++i) perm[i] = i;
    do {
      std::vector<int64_t> out(r), st(r);
      for (int i = 0; i < r; ++i) {
        out[i] = in_shape[perm[i]];
        st[i] = in_strides[perm[i]];
      }
      std::vector<uint32_t> a(src.size()), b(src.size());
      ThreadPool pool(3);
      kernels::strided_copy(4, r, out.data(), src.data(), st.data(), a.data(), &pool);
      kernels::strided_copy_reference(4, r, out.data(), src.data(), st.data(), b.data());
      ASSERT_EQ(a, b);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

}  // namespace
}  // namespace glassbox::testing_nn

namespace glassbox::testing_nn {
namespace {

Status run1(const graph::Node& node, int64_t opset, TestContext& ctx) { return run_op(node, opset, ctx); }

TEST(Transpose, MatchesNaiveOnOddShapes) {
  Tensor x = random_f32({3, 1, 5, 2}, 5);
  TestContext ctx({x});
  ASSERT_TRUE(run1(make_node("Transpose", {attr_is("perm", {2, 0, 3, 1})}), 13, ctx).ok());
  const Tensor& y = ctx.output(0);
  ASSERT_EQ(y.shape(), (Shape{5, 3, 2, 1}));
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 5; ++c)
      for (int d = 0; d < 2; ++d) EXPECT_EQ(y.data<float>()[(c * 3 + a) * 2 + d], x.data<float>()[(a * 5 + c) * 2 + d]);
  TestContext empty({Tensor::allocate(DataType::kInt64, {0, 4}).value()});
  ASSERT_TRUE(run1(make_node("Transpose"), 13, empty).ok());
  EXPECT_EQ(empty.output(0).shape(), (Shape{4, 0}));
}

TEST(Reshape, ZeroCopiesUnlessAllowzeroAndAliases) {
  Tensor x = random_f32({2, 3, 4}, 1);
  TestContext ctx({x, i64({3}, {0, -1, 2})});
  ASSERT_TRUE(run1(make_node("Reshape"), 14, ctx).ok());
  EXPECT_EQ(ctx.output(0).shape(), (Shape{2, 6, 2}));
  EXPECT_TRUE(ctx.was_aliased(0));
  TestContext az({Tensor::allocate(DataType::kFloat32, {0, 3}).value(), i64({2}, {3, 0})});
  ASSERT_TRUE(run1(make_node("Reshape", {attr_i("allowzero", 1)}), 14, az).ok());
  EXPECT_EQ(az.output(0).shape(), (Shape{3, 0}));
  TestContext bad({x, i64({2}, {5, -1})});
  EXPECT_FALSE(run1(make_node("Reshape"), 14, bad).ok());
}

TEST(Slice, NegativeStepsAndClamping) {
  Tensor x = f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  TestContext ctx({x, i64({2}, {0, -1}), i64({2}, {INT64_MAX, INT64_MIN}), i64({2}, {0, 1}), i64({2}, {1, -2})});
  ASSERT_TRUE(run1(make_node("Slice"), 13, ctx).ok());
  EXPECT_EQ(ctx.output(0).shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{4, 2, 0, 9, 7, 5}));
  TestContext empty({x, i64({1}, {3}), i64({1}, {1}), i64({1}, {1})});
  ASSERT_TRUE(run1(make_node("Slice"), 13, empty).ok());
  EXPECT_EQ(empty.output(0).shape(), (Shape{2, 0}));
}

TEST(SplitConcat, RoundTrip) {
  Tensor x = random_f32({3, 7, 2}, 9);
  TestContext sp({x, i64({3}, {1, 4, 2})}, 3);
  ASSERT_TRUE(run1(make_node("Split", {attr_i("axis", -2)}, 3), 13, sp).ok());
  EXPECT_EQ(sp.output(1).shape(), (Shape{3, 4, 2}));
  TestContext cc({sp.output(0), sp.output(1), sp.output(2)});
  ASSERT_TRUE(run1(make_node("Concat", {attr_i("axis", 1)}), 13, cc).ok());
  EXPECT_EQ(to_vec(cc.output(0)), to_vec(x));
  TestContext eq({x}, 2);  // opset 11 equal split of an odd dim is an error
  EXPECT_FALSE(run1(make_node("Split", {attr_i("axis", 1)}, 2), 11, eq).ok());
}

TEST(Gather, NegativeIndicesAndOutOfRangeError) {
  Tensor x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  TestContext ctx({x, i64({2, 2}, {-1, 0, 1, 2})});
  ASSERT_TRUE(run1(make_node("Gather"), 13, ctx).ok());
  EXPECT_EQ(ctx.output(0).shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(to_vec(ctx.output(0)), (std::vector<float>{4, 5, 0, 1, 2, 3, 4, 5}));
  TestContext bad({x, i64({2}, {0, 3})});
  Status s = run1(make_node("Gather"), 13, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.to_string().find("index 3"), std::string::npos) << s.to_string();
  EXPECT_NE(s.to_string().find("test_node"), std::string::npos) << s.to_string();
  TestContext bad2({x, i64({1}, {-4})});
  EXPECT_FALSE(run1(make_node("Gather"), 13, bad2).ok());
}

TEST(IndexOps, OutOfRangeIndicesAreErrors) {
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  {
    TestContext ok({x, i64({2, 2}, {2, -1, 0, 1})});
    ASSERT_TRUE(run1(make_node("GatherElements", {attr_i("axis", 1)}), 13, ok).ok());
    EXPECT_EQ(to_vec(ok.output(0)), (std::vector<float>{2, 2, 3, 4}));
    TestContext bad({x, i64({1, 1}, {3})});
    Status s = run1(make_node("GatherElements", {attr_i("axis", 1)}), 13, bad);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.to_string().find("index 3"), std::string::npos);
  }
  {
    TestContext ok({x, i64({2, 2}, {1, 2, 0, -3})});
    ASSERT_TRUE(run1(make_node("GatherND"), 13, ok).ok());
    EXPECT_EQ(to_vec(ok.output(0)), (std::vector<float>{5, 0}));
    TestContext bad({x, i64({1, 2}, {2, 0})});
    EXPECT_FALSE(run1(make_node("GatherND"), 13, bad).ok());
  }
  {
    TestContext ok({x, i64({1, 1}, {1}), f32({1, 3}, {7, 8, 9})});
    ASSERT_TRUE(run1(make_node("ScatterND"), 13, ok).ok());
    EXPECT_EQ(to_vec(ok.output(0)), (std::vector<float>{0, 1, 2, 7, 8, 9}));
    TestContext bad({x, i64({1, 1}, {-3}), f32({1, 3}, {7, 8, 9})});
    EXPECT_FALSE(run1(make_node("ScatterND"), 13, bad).ok());
  }
  {
    TestContext ok({x, i64({1, 2}, {2, 0}), f32({1, 2}, {7, 8})});
    ASSERT_TRUE(run1(make_node("ScatterElements", {attr_i("axis", 1), attr_s("reduction", "add")}), 16, ok).ok());
    EXPECT_EQ(to_vec(ok.output(0)), (std::vector<float>{8, 1, 9, 3, 4, 5}));
    TestContext bad({x, i64({1, 1}, {5}), f32({1, 1}, {7})});
    EXPECT_FALSE(run1(make_node("ScatterElements", {attr_i("axis", 1)}), 13, bad).ok());
  }
}

TEST(ShapeBombs, HitTheMemoryCapBeforeAllocating) {
  const size_t cap = size_t{64} << 20;
  {
    TestContext ctx({f32({1}, {1.f}), i64({2}, {1000000, 1000000})}, 1, cap);
    Status s = run1(make_node("Expand"), 13, ctx);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kLimitExceeded);
  }
  {
    TestContext ctx({f32({1, 1}, {1.f}), i64({2}, {1000000, 1000000})}, 1, cap);
    EXPECT_EQ(run1(make_node("Tile"), 13, ctx).error().code, ErrorCode::kLimitExceeded);
  }
  {
    TestContext ctx({i64({2}, {1000000, 1000000})}, 1, cap);
    EXPECT_EQ(run1(make_node("ConstantOfShape"), 13, ctx).error().code, ErrorCode::kLimitExceeded);
  }
  {
    TestContext ctx({i64({}, {0}), i64({}, {1000000000000}), i64({}, {1})}, 1, cap);
    EXPECT_EQ(run1(make_node("Range"), 13, ctx).error().code, ErrorCode::kLimitExceeded);
  }
  {
    TestContext ctx({f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), f32({4}, {1, 1, 1e6f, 1e6f})}, 1, cap);
    EXPECT_EQ(run1(make_node("Resize"), 13, ctx).error().code, ErrorCode::kLimitExceeded);
  }
}

TEST(SmallOps, ShapeUnsqueezeSqueezeTileOneHotNonZero) {
  Tensor x = random_f32({2, 1, 3}, 3);
  TestContext sh({x});
  ASSERT_TRUE(run1(make_node("Shape", {attr_i("start", -2)}), 15, sh).ok());
  EXPECT_EQ(to_vec_t<int64_t>(sh.output(0)), (std::vector<int64_t>{1, 3}));
  TestContext us({x, i64({2}, {-1, 0})});
  ASSERT_TRUE(run1(make_node("Unsqueeze"), 13, us).ok());
  EXPECT_EQ(us.output(0).shape(), (Shape{1, 2, 1, 3, 1}));
  TestContext sq({x});
  ASSERT_TRUE(run1(make_node("Squeeze"), 13, sq).ok());
  EXPECT_EQ(sq.output(0).shape(), (Shape{2, 3}));
  TestContext sqbad({x, i64({1}, {0})});
  EXPECT_FALSE(run1(make_node("Squeeze"), 13, sqbad).ok());
  TestContext tl({f32({2}, {1, 2}), i64({1}, {3})});
  ASSERT_TRUE(run1(make_node("Tile"), 13, tl).ok());
  EXPECT_EQ(to_vec(tl.output(0)), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  TestContext oh({i64({3}, {0, -1, 7}), i64({}, {3}), f32({2}, {0, 1})});
  ASSERT_TRUE(run1(make_node("OneHot"), 11, oh).ok());
  EXPECT_EQ(to_vec(oh.output(0)), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0}));
  TestContext nz({f32({2, 2}, {0, -0.f, 3, 1})});
  ASSERT_TRUE(run1(make_node("NonZero"), 13, nz).ok());
  EXPECT_EQ(to_vec_t<int64_t>(nz.output(0)), (std::vector<int64_t>{1, 1, 0, 1}));
}

TEST(Pad, ModesMatchNumpy) {
  Tensor x = f32({1, 3}, {1, 2, 3});
  TestContext c({x, i64({4}, {0, 2, 0, 1}), f32({}, {9})});
  ASSERT_TRUE(run1(make_node("Pad"), 13, c).ok());
  EXPECT_EQ(to_vec(c.output(0)), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  TestContext r({x, i64({4}, {0, 2, 0, 1})});
  ASSERT_TRUE(run1(make_node("Pad", {attr_s("mode", "reflect")}), 13, r).ok());
  EXPECT_EQ(to_vec(r.output(0)), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  TestContext e({x, i64({4}, {0, 2, 0, -1})});
  ASSERT_TRUE(run1(make_node("Pad", {attr_s("mode", "edge")}), 13, e).ok());
  EXPECT_EQ(to_vec(e.output(0)), (std::vector<float>{1, 1, 1, 2}));
}

TEST(Resize, LinearHalfPixelAndNearest) {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  TestContext lin({x, Tensor(), f32({4}, {1, 1, 2, 2})});
  ASSERT_TRUE(run1(make_node("Resize", {attr_s("mode", "linear")}), 13, lin).ok());
  EXPECT_EQ(to_vec(lin.output(0)), (std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f,
                                                        3.25f, 3.5f, 3, 3.25f, 3.75f, 4}));
  TestContext nn({x, Tensor(), Tensor(), i64({4}, {1, 1, 3, 1})});
  ASSERT_TRUE(run1(make_node("Resize", {attr_s("coordinate_transformation_mode", "asymmetric"),
                                        attr_s("nearest_mode", "floor")}), 13, nn).ok());
  EXPECT_EQ(nn.output(0).shape(), (Shape{1, 1, 3, 1}));
  EXPECT_EQ(to_vec(nn.output(0)), (std::vector<float>{1, 1, 3}));
}

TEST(DepthToSpace, InverseOfSpaceToDepth) {
  Tensor x = random_f32({2, 3, 4, 6}, 21);
  TestContext s2d({x});
  ASSERT_TRUE(run1(make_node("SpaceToDepth", {attr_i("blocksize", 2)}), 13, s2d).ok());
  EXPECT_EQ(s2d.output(0).shape(), (Shape{2, 12, 2, 3}));
  TestContext d2s({s2d.output(0)});
  ASSERT_TRUE(run1(make_node("DepthToSpace", {attr_i("blocksize", 2)}), 13, d2s).ok());
  EXPECT_EQ(to_vec(d2s.output(0)), to_vec(x));
}

}  // namespace
}  // namespace glassbox::testing_nn

namespace glassbox::testing_nn {
namespace {

TEST(Hostile, OverflowingShapesAndSizesAreErrors) {
  Tensor x = random_f32({2, 3}, 4);
  TestContext pad({x, i64({4}, {0, INT64_MAX, 0, INT64_MAX})});
  EXPECT_FALSE(run_op(make_node("Pad"), 13, pad).ok());
  TestContext rs({x, i64({3}, {INT64_MAX, 4, -1})});
  EXPECT_FALSE(run_op(make_node("Reshape"), 14, rs).ok());
  TestContext sp({x, i64({2}, {INT64_MAX, INT64_MAX})}, 2);
  EXPECT_FALSE(run_op(make_node("Split", {attr_i("axis", 1)}, 2), 13, sp).ok());
  TestContext tl({x, i64({2}, {INT64_MAX, 2})});
  EXPECT_FALSE(run_op(make_node("Tile"), 13, tl).ok());
}

}  // namespace
}  // namespace glassbox::testing_nn
