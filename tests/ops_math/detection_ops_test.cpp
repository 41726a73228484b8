// NonMaxSuppression, GridSample, RoiAlign, TfIdfVectorizer: hand-computed
// cases, awkward shapes (empty, size 1) and bad inputs.
#include "test_context.h"
#include "test_util.h"

namespace glassbox::ops::testing {
namespace {

graph::Attribute floats_attr(const std::string& name, std::vector<float> v) {
  graph::Attribute a;
  a.name = name;
  a.type = graph::AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}

std::vector<int64_t> ints_of(const Tensor& t) { return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel()); }

// --- NonMaxSuppression ---
struct NmsCase {
  Tensor boxes = make_tensor<float>(DataType::kFloat32, {1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3});
  Tensor scores = make_tensor<float>(DataType::kFloat32, {1, 1, 3}, {0.7f, 0.9f, 0.8f});
  Tensor max_out = make_tensor<int64_t>(DataType::kInt64, {1}, {10});
  Tensor iou = make_tensor<float>(DataType::kFloat32, {1}, {0.5f});
};

TEST(NonMaxSuppression, SuppressesOverlapsInScoreOrder) {
  NmsCase c;
  // Box 1 (0.9) is kept; box 0 overlaps it with IoU 0.9 / 1.1 > 0.5; box 2 is disjoint.
  auto y = run_op(NodeBuilder("NonMaxSuppression", 4).node, 11, {&c.boxes, &c.scores, &c.max_out, &c.iou}).value()[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // A score threshold drops box 2 (0.8 is not > 0.85); max_output 1 keeps only the best.
  Tensor thr = make_tensor<float>(DataType::kFloat32, {1}, {0.85f});
  y = run_op(NodeBuilder("NonMaxSuppression", 5).node, 11, {&c.boxes, &c.scores, &c.max_out, &c.iou, &thr}).value()[0];
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{0, 0, 1}));
  Tensor one = make_tensor<int64_t>(DataType::kInt64, {1}, {1});
  c.iou.mutable_data<float>()[0] = 0.95f;  // nothing overlaps that much
  y = run_op(NodeBuilder("NonMaxSuppression", 4).node, 11, {&c.boxes, &c.scores, &one, &c.iou}).value()[0];
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{0, 0, 1}));
}

TEST(NonMaxSuppression, CenterPointBoxesAndEmptyInputs) {
  // Center format: (xc, yc, w, h). Boxes 0 and 1 are the same box written two ways.
  Tensor boxes = make_tensor<float>(DataType::kFloat32, {1, 2, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.5f, 1, 1});
  Tensor scores = make_tensor<float>(DataType::kFloat32, {1, 1, 2}, {0.5f, 0.6f});
  Tensor max_out = make_tensor<int64_t>(DataType::kInt64, {1}, {5});
  auto y = run_op(NodeBuilder("NonMaxSuppression", 3).i("center_point_box", 1).node, 11, {&boxes, &scores, &max_out})
               .value()[0];
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{0, 0, 1}));
  // No max_output_boxes_per_class: nothing is selected.
  y = run_op(NodeBuilder("NonMaxSuppression", 2).node, 11, {&boxes, &scores}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  Tensor no_boxes = Tensor::allocate(DataType::kFloat32, {1, 0, 4}).value();
  Tensor no_scores = Tensor::allocate(DataType::kFloat32, {1, 3, 0}).value();
  y = run_op(NodeBuilder("NonMaxSuppression", 3).node, 11, {&no_boxes, &no_scores, &max_out}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(NonMaxSuppression, BadInputsAreErrors) {
  NmsCase c;
  Tensor flat = make_tensor<float>(DataType::kFloat32, {3, 4}, {});
  EXPECT_FALSE(run_op(NodeBuilder("NonMaxSuppression", 4).node, 11, {&flat, &c.scores, &c.max_out, &c.iou}).ok());
  Tensor wrong_scores = make_tensor<float>(DataType::kFloat32, {1, 1, 2}, {});
  EXPECT_FALSE(
      run_op(NodeBuilder("NonMaxSuppression", 4).node, 11, {&c.boxes, &wrong_scores, &c.max_out, &c.iou}).ok());
  EXPECT_FALSE(create_op(NodeBuilder("NonMaxSuppression", 2).i("center_point_box", 2).node, 11).ok());
}

// --- GridSample ---
Tensor identity_grid(int64_t h, int64_t w) {  // align_corners = 1 coordinates of every pixel
  Tensor g = Tensor::allocate(DataType::kFloat32, {1, h, w, 2}).value();
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j) {
      g.mutable_data<float>()[(i * w + j) * 2] = w > 1 ? -1.f + 2.f * static_cast<float>(j) / static_cast<float>(w - 1) : 0.f;
      g.mutable_data<float>()[(i * w + j) * 2 + 1] = h > 1 ? -1.f + 2.f * static_cast<float>(i) / static_cast<float>(h - 1) : 0.f;
    }
  return g;
}

TEST(GridSample, IdentityGridReproducesInputInEveryMode) {
  Tensor x = random_f32({1, 2, 3, 5}, 7);
  Tensor g = identity_grid(3, 5);
  const std::vector<float> want(x.data<float>(), x.data<float>() + x.numel());
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      auto y = run_op(NodeBuilder("GridSample", 2).s("mode", mode).s("padding_mode", pad).i("align_corners", 1).node,
                      16, {&x, &g}, 2);
      ASSERT_TRUE(y.ok()) << y.status().to_string();
      SCOPED_TRACE(std::string(mode) + "/" + pad);
      expect_close(y.value()[0], want, 1e-5f, 1e-5f);
    }
}

TEST(GridSample, OutsidePointsFollowPadding) {
  // x = [10, 20, 30] (1 x 3), align_corners = 1: grid x = -1.5 maps to pixel -0.5.
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 1, 1, 3}, {10, 20, 30});
  Tensor g = make_tensor<float>(DataType::kFloat32, {1, 1, 2, 2}, {-1.5f, 0.f, 3.f, 0.f});
  auto run = [&](const char* pad) {
    return run_op(NodeBuilder("GridSample", 2).s("padding_mode", pad).i("align_corners", 1).node, 16, {&x, &g})
        .value()[0];
  };
  expect_close(run("zeros"), {5.f, 0.f});         // half of pixel 0; pixel 4 is far outside
  expect_close(run("border"), {10.f, 30.f});      // clamped to the edges
  expect_close(run("reflection"), {15.f, 10.f});  // mirrored into [0, 2]: -0.5 -> 0.5, 4 -> 0
}

TEST(GridSample, EmptyAndBadShapes) {
  Tensor x = random_f32({1, 1, 2, 2}, 3);
  Tensor empty_grid = Tensor::allocate(DataType::kFloat32, {1, 0, 4, 2}).value();
  auto y = run_op(NodeBuilder("GridSample", 2).node, 16, {&x, &empty_grid}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 0, 4}));
  Tensor bad_grid = Tensor::allocate(DataType::kFloat32, {1, 2, 2, 3}).value();
  EXPECT_FALSE(run_op(NodeBuilder("GridSample", 2).node, 16, {&x, &bad_grid}).ok());
  Tensor other_batch = Tensor::allocate(DataType::kFloat32, {2, 2, 2, 2}).value();
  EXPECT_FALSE(run_op(NodeBuilder("GridSample", 2).node, 16, {&x, &other_batch}).ok());
  Tensor nan_grid = make_tensor<float>(DataType::kFloat32, {1, 1, 1, 2}, {NAN, 1e30f});
  for (const char* mode : {"bilinear", "nearest", "bicubic"})  // no out-of-bounds reads (ASan), no UB casts (UBSan)
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1})
        EXPECT_TRUE(run_op(NodeBuilder("GridSample", 2).s("mode", mode).s("padding_mode", pad).i("align_corners", align).node,
                           16, {&x, &nan_grid})
                        .ok());
  EXPECT_FALSE(create_op(NodeBuilder("GridSample", 2).s("mode", "area").node, 16).ok());
}

// --- RoiAlign ---
TEST(RoiAlign, HandComputedBinsInBothCoordinateModes) {
  Tensor x = make_tensor<float>(DataType::kFloat32, {1, 1, 2, 2}, {0, 1, 2, 3});
  Tensor rois = make_tensor<float>(DataType::kFloat32, {1, 4}, {0, 0, 1, 1});
  Tensor bi = make_tensor<int64_t>(DataType::kInt64, {1}, {0});
  // half_pixel: the roi starts at -0.5, one sample at (0, 0).
  auto y = run_op(NodeBuilder("RoiAlign", 3).i("sampling_ratio", 1).node, 16, {&x, &rois, &bi}).value()[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1}));
  expect_close(y, {0.f});
  // output_half_pixel: one sample at (0.5, 0.5) = mean of the four pixels.
  y = run_op(NodeBuilder("RoiAlign", 3).i("sampling_ratio", 1).s("coordinate_transformation_mode", "output_half_pixel").node,
             16, {&x, &rois, &bi})
          .value()[0];
  expect_close(y, {1.5f});
}

TEST(RoiAlign, ConstantInputGivesConstantBins) {
  Tensor x = Tensor::allocate(DataType::kFloat32, {2, 3, 5, 7}).value();
  for (int64_t i = 0; i < x.numel(); ++i) x.mutable_data<float>()[i] = static_cast<float>(i / 35);  // per plane
  Tensor rois = make_tensor<float>(DataType::kFloat32, {2, 4}, {1, 1, 6, 4, 0.5f, 0.5f, 2.5f, 3.5f});
  Tensor bi = make_tensor<int64_t>(DataType::kInt64, {2}, {1, 0});
  auto y = run_op(NodeBuilder("RoiAlign", 3).i("output_height", 3).i("output_width", 2).node, 16, {&x, &rois, &bi}, 2)
               .value()[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3, 2}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t k = 0; k < 6; ++k)
        EXPECT_NEAR(y.data<float>()[(r * 3 + c) * 6 + k], static_cast<float>((r == 0 ? 3 : 0) + c), 1e-5f);
}

TEST(RoiAlign, BadInputsAreErrors) {
  Tensor x = random_f32({1, 1, 4, 4}, 1);
  Tensor rois = make_tensor<float>(DataType::kFloat32, {1, 4}, {0, 0, 2, 2});
  Tensor bad_index = make_tensor<int64_t>(DataType::kInt64, {1}, {1});
  EXPECT_FALSE(run_op(NodeBuilder("RoiAlign", 3).node, 16, {&x, &rois, &bad_index}).ok());
  Tensor nan_rois = make_tensor<float>(DataType::kFloat32, {1, 4}, {0, NAN, 2, 2});
  Tensor bi = make_tensor<int64_t>(DataType::kInt64, {1}, {0});
  EXPECT_FALSE(run_op(NodeBuilder("RoiAlign", 3).node, 16, {&x, &nan_rois, &bi}).ok());
  Tensor huge_roi = make_tensor<float>(DataType::kFloat32, {1, 4}, {0, 0, 1e6f, 1e6f});  // 10^12 samples per bin
  auto bomb = run_op(NodeBuilder("RoiAlign", 3).node, 16, {&x, &huge_roi, &bi});
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.error().code, ErrorCode::kLimitExceeded);
  Tensor no_rois = Tensor::allocate(DataType::kFloat32, {0, 4}).value();
  Tensor no_bi = Tensor::allocate(DataType::kInt64, {0}).value();
  EXPECT_EQ(run_op(NodeBuilder("RoiAlign", 3).node, 16, {&x, &no_rois, &no_bi}).value()[0].shape(), (Shape{0, 1, 1, 1}));
  EXPECT_FALSE(create_op(NodeBuilder("RoiAlign", 3).s("mode", "median").node, 16).ok());
  EXPECT_FALSE(create_op(NodeBuilder("RoiAlign", 3).s("coordinate_transformation_mode", "half_pixel").node, 10).ok());
}

// --- TfIdfVectorizer ---
NodeBuilder tfidf(const std::string& mode, int64_t max_skip) {
  NodeBuilder b("TfIdfVectorizer", 1);
  b.i("min_gram_length", 1).i("max_gram_length", 2).i("max_skip_count", max_skip).s("mode", mode);
  b.ints("ngram_counts", {0, 2}).ints("ngram_indexes", {0, 1, 2}).ints("pool_int64s", {1, 2, 1, 2});
  return b;
}

TEST(TfIdfVectorizer, CountsUnigramsOnceAndSkippedBigrams) {
  Tensor x = make_tensor<int64_t>(DataType::kInt64, {2, 4}, {1, 2, 1, 2, 1, 5, 2, 7});
  // Row 0: unigrams 1, 2 twice each (not again per skip); bigram (1, 2) at 0-1 and 2-3 (skip 0)
  // and 0-3 (skip 2). Row 1: unigrams once each; bigram (1, 2) only at 0-2 (skip 1).
  auto y = run_op(tfidf("TF", 2).node, 9, {&x}).value()[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  expect_close(y, {2, 2, 3, 1, 1, 1});
  y = run_op(tfidf("TF", 0).node, 9, {&x}).value()[0];
  expect_close(y, {2, 2, 2, 1, 1, 0});
  auto weighted = tfidf("TFIDF", 0);
  weighted.node.attributes["weights"] = floats_attr("weights", {0.5f, 2.f, 3.f});
  expect_close(run_op(weighted.node, 9, {&x}).value()[0], {1, 4, 6, 0.5f, 2, 0});
  weighted.s("mode", "IDF");
  expect_close(run_op(weighted.node, 9, {&x}).value()[0], {0.5f, 2, 3, 0.5f, 2, 0});
}

TEST(TfIdfVectorizer, OneDimensionalShortAndInt32Inputs) {
  Tensor x = make_tensor<int32_t>(DataType::kInt32, {1}, {2});
  auto y = run_op(tfidf("TF", 3).node, 9, {&x}).value()[0];
  ASSERT_EQ(y.shape(), (Shape{3}));
  expect_close(y, {0, 1, 0});
  Tensor empty = Tensor::allocate(DataType::kInt64, {0}).value();
  expect_close(run_op(tfidf("TF", 3).node, 9, {&empty}).value()[0], {0, 0, 0});
}

TEST(TfIdfVectorizer, BadAttributesAreRefused) {
  auto b = tfidf("TF", 0);
  b.ints("ngram_indexes", {0, 1});  // 3 pool n-grams
  EXPECT_FALSE(create_op(b.node, 9).ok());
  auto c = tfidf("TF", 0);
  c.ints("ngram_counts", {0, 3});  // bigrams would not split the pool evenly
  EXPECT_FALSE(create_op(c.node, 9).ok());
  EXPECT_FALSE(create_op(tfidf("BM25", 0).node, 9).ok());
  Tensor f = make_tensor<float>(DataType::kFloat32, {2}, {1, 2});
  EXPECT_FALSE(run_op(tfidf("TF", 0).node, 9, {&f}).ok());
}

}  // namespace
}  // namespace glassbox::ops::testing
