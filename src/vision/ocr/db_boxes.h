// DB-net post-processing geometry (docs/vision.md, "OCR"): the probability map of a PP-OCR detector
// turned into oriented text boxes. Pure functions over plain arrays, unit-tested in tests/vision.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "glassbox/ocr.h"

namespace glassbox::vision::ocr {

struct DbParams {
  float thresh = 0.3f;        // pixel threshold on the probability map
  float box_thresh = 0.6f;    // mean probability inside a box below which it is dropped
  double unclip_ratio = 1.5;  // expansion distance = area * ratio / perimeter
  double min_size = 3;        // shortest side (map pixels) below which a box is dropped
  int max_candidates = 1000;  // regions examined per image, in scan order
};

struct DbBox {
  Quad quad;          // in map coordinates, unclipped (expanded)
  float score = 0;    // mean probability inside the shrunk box
};

// Oriented minimum-area rectangle of a point set (rotating calipers over the convex hull), corners
// ordered as a Quad; `short_side` gets its shorter side. Fewer than 1 point: an empty quad.
Quad min_area_rect(std::vector<Point> pts, double* short_side);

// Mean of `prob` (height x width, row-major) over the pixels whose centres lie inside `q`
// (PaddleOCR's "fast" score: the polygon filled over its bounding box).
float box_score(const float* prob, int width, int height, const Quad& q);

// The boxes of one probability map: 8-connected regions of prob > thresh -> min-area rectangle ->
// score -> expanded by the unclip distance -> min-size filter again. Order: the regions' scan order.
std::vector<DbBox> db_boxes(const float* prob, int width, int height, const DbParams& p);

// Reading order: by top edge, then left to right for boxes whose tops differ by < 10 pixels
// (PaddleOCR's sorted_boxes rule).
void sort_reading_order(std::vector<Quad>& quads, std::vector<size_t>& order);

}  // namespace glassbox::vision::ocr
