// DB post-processing geometry (src/vision/ocr/db_boxes.h) on hand-made probability maps whose boxes are
// known in closed form: the minimum-area rectangle, the score, the unclip distance, the filters, the order.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "vision/ocr/db_boxes.h"

namespace {

using namespace glassbox::vision::ocr;

std::vector<float> map_with_rect(int w, int h, int x0, int y0, int x1, int y1, float p) {
  std::vector<float> m(static_cast<size_t>(w) * h, 0.01f);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) m[static_cast<size_t>(y) * w + x] = p;
  return m;
}

TEST(OcrBoxes, MinAreaRectOfAnAxisAlignedBlock) {
  std::vector<Point> pts;
  for (int y = 5; y <= 14; ++y)
    for (int x = 10; x <= 29; ++x) pts.push_back({double(x), double(y)});
  double side = 0;
  const Quad q = min_area_rect(pts, &side);
  EXPECT_NEAR(side, 9, 1e-9);
  EXPECT_NEAR(q[0].x, 10, 1e-9); EXPECT_NEAR(q[0].y, 5, 1e-9);    // top-left
  EXPECT_NEAR(q[1].x, 29, 1e-9); EXPECT_NEAR(q[1].y, 5, 1e-9);    // top-right
  EXPECT_NEAR(q[2].x, 29, 1e-9); EXPECT_NEAR(q[2].y, 14, 1e-9);   // bottom-right
  EXPECT_NEAR(q[3].x, 10, 1e-9); EXPECT_NEAR(q[3].y, 14, 1e-9);   // bottom-left
}

TEST(OcrBoxes, MinAreaRectOfARotatedRectangle) {
  // Corners of a 40 x 10 rectangle turned by 20 degrees, plus interior points.
  const double a = 20 * M_PI / 180, c = std::cos(a), s = std::sin(a);
  std::vector<Point> pts;
  for (int i = 0; i <= 40; ++i)
    for (int j = 0; j <= 10; ++j) pts.push_back({50 + i * c - j * s, 30 + i * s + j * c});
  double side = 0;
  const Quad q = min_area_rect(pts, &side);
  EXPECT_NEAR(side, 10, 1e-6);
  EXPECT_NEAR(std::hypot(q[1].x - q[0].x, q[1].y - q[0].y) * std::hypot(q[3].x - q[0].x, q[3].y - q[0].y), 400, 1e-6);
  // PaddleOCR's corner order: of the two leftmost corners the upper is top-left, the other bottom-left.
  EXPECT_NEAR(q[0].x, 50, 1e-6); EXPECT_NEAR(q[0].y, 30, 1e-6);
  EXPECT_NEAR(q[3].x, 50 - 10 * s, 1e-6); EXPECT_NEAR(q[3].y, 30 + 10 * c, 1e-6);
  EXPECT_NEAR(q[1].x, 50 + 40 * c, 1e-6); EXPECT_NEAR(q[1].y, 30 + 40 * s, 1e-6);
}

TEST(OcrBoxes, OneRegionScoredAndUnclipped) {
  const auto m = map_with_rect(64, 48, 10, 20, 49, 29, 0.9f);
  const auto boxes = db_boxes(m.data(), 64, 48, DbParams{});
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_NEAR(boxes[0].score, 0.9f, 1e-6);
  // Pixel-centre extents 39 x 9; d = area * 1.5 / perimeter.
  const double d = 39.0 * 9 * 1.5 / (2 * (39 + 9));
  const Quad& q = boxes[0].quad;
  EXPECT_NEAR(q[0].x, 10 - d, 1e-6); EXPECT_NEAR(q[0].y, 20 - d, 1e-6);
  EXPECT_NEAR(q[2].x, 49 + d, 1e-6); EXPECT_NEAR(q[2].y, 29 + d, 1e-6);
}

TEST(OcrBoxes, FiltersByBoxScoreMinSizeAndThreshold) {
  auto weak = map_with_rect(64, 48, 10, 20, 49, 29, 0.35f);  // above thresh 0.3, below box_thresh 0.6
  EXPECT_TRUE(db_boxes(weak.data(), 64, 48, DbParams{}).empty());
  auto thin = map_with_rect(64, 48, 10, 20, 49, 21, 0.95f);  // 2 rows: shortest side 1 < min_size 3
  EXPECT_TRUE(db_boxes(thin.data(), 64, 48, DbParams{}).empty());
  DbParams low;
  low.box_thresh = 0.3f;
  EXPECT_EQ(db_boxes(weak.data(), 64, 48, low).size(), 1u);
  auto below = map_with_rect(64, 48, 10, 20, 49, 29, 0.29f);
  EXPECT_TRUE(db_boxes(below.data(), 64, 48, low).empty());
}

TEST(OcrBoxes, TwoRegionsAndMaxCandidates) {
  auto m = map_with_rect(96, 64, 5, 5, 40, 15, 0.9f);
  for (int y = 40; y <= 50; ++y)
    for (int x = 50; x <= 90; ++x) m[static_cast<size_t>(y) * 96 + x] = 0.8f;
  EXPECT_EQ(db_boxes(m.data(), 96, 64, DbParams{}).size(), 2u);
  DbParams one;
  one.max_candidates = 1;
  const auto b = db_boxes(m.data(), 96, 64, one);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NEAR(b[0].score, 0.9f, 1e-6);  // scan order: the upper region first
}

TEST(OcrBoxes, ReadingOrder) {
  auto box = [](double x, double y) { return Quad{Point{x, y}, Point{x + 10, y}, Point{x + 10, y + 5}, Point{x, y + 5}}; };
  std::vector<Quad> q = {box(100, 52), box(0, 50), box(0, 10), box(50, 80)};
  std::vector<size_t> order;
  sort_reading_order(q, order);
  // top line first; (0,50) before (100,52): tops within 10 px, so left to right
  EXPECT_EQ(order, (std::vector<size_t>{2, 1, 0, 3}));
}

}  // namespace
