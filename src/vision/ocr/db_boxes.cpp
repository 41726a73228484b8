#include "vision/ocr/db_boxes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace glassbox::vision::ocr {
namespace {

double cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Andrew's monotone chain; collinear points dropped. Counter-clockwise in a y-up frame.
std::vector<Point> convex_hull(std::vector<Point> pts) {
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  pts.erase(std::unique(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; }),
            pts.end());
  if (pts.size() < 3) return pts;
  std::vector<Point> h(2 * pts.size());
  size_t k = 0;
  for (const auto& p : pts) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], p) <= 0) --k;
    h[k++] = p;
  }
  for (size_t i = pts.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(h[k - 2], h[k - 1], pts[i]) <= 0) --k;
    h[k++] = pts[i];
  }
  h.resize(k - 1);
  return h;
}

// PaddleOCR's get_mini_boxes order: the two leftmost corners give top-left (smaller y) and
// bottom-left, the two rightmost top-right and bottom-right.
Quad order_corners(std::array<Point, 4> c) {
  std::sort(c.begin(), c.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  const Point tl = c[1].y > c[0].y ? c[0] : c[1], bl = c[1].y > c[0].y ? c[1] : c[0];
  const Point tr = c[3].y > c[2].y ? c[2] : c[3], br = c[3].y > c[2].y ? c[3] : c[2];
  return {tl, tr, br, bl};
}

double dist(const Point& a, const Point& b) { return std::hypot(a.x - b.x, a.y - b.y); }

}  // namespace

Quad min_area_rect(std::vector<Point> pts, double* short_side) {
  *short_side = 0;
  if (pts.empty()) return {};
  const std::vector<Point> h = convex_hull(std::move(pts));
  if (h.size() == 1) return {h[0], h[0], h[0], h[0]};
  double best = INFINITY;
  std::array<Point, 4> corners{};
  for (size_t i = 0; i < h.size(); ++i) {
    const Point& a = h[i];
    const Point& b = h[(i + 1) % h.size()];
    const double len = dist(a, b);
    if (len == 0) continue;
    const double ux = (b.x - a.x) / len, uy = (b.y - a.y) / len;  // edge direction; normal (-uy, ux)
    double lo_u = INFINITY, hi_u = -INFINITY, lo_v = INFINITY, hi_v = -INFINITY;
    for (const auto& p : h) {
      const double du = (p.x - a.x) * ux + (p.y - a.y) * uy, dv = -(p.x - a.x) * uy + (p.y - a.y) * ux;
      lo_u = std::min(lo_u, du), hi_u = std::max(hi_u, du), lo_v = std::min(lo_v, dv), hi_v = std::max(hi_v, dv);
    }
    const double area = (hi_u - lo_u) * (hi_v - lo_v);
    if (area < best - 1e-9) {
      best = area;
      auto at = [&](double u, double v) { return Point{a.x + u * ux - v * uy, a.y + u * uy + v * ux}; };
      corners = {at(lo_u, lo_v), at(hi_u, lo_v), at(hi_u, hi_v), at(lo_u, hi_v)};
      *short_side = std::min(hi_u - lo_u, hi_v - lo_v);
    }
  }
  return order_corners(corners);
}

float box_score(const float* prob, int width, int height, const Quad& q) {
  // Vertices truncated to integers as PaddleOCR does (box.astype(int32)) before filling.
  Quad t;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (int k = 0; k < 4; ++k) {
    t[k] = {std::trunc(q[k].x), std::trunc(q[k].y)};
    x0 = std::min(x0, q[k].x), x1 = std::max(x1, q[k].x), y0 = std::min(y0, q[k].y), y1 = std::max(y1, q[k].y);
  }
  const int xa = std::clamp(static_cast<int>(std::floor(x0)), 0, width - 1);
  const int xb = std::clamp(static_cast<int>(std::ceil(x1)), 0, width - 1);
  const int ya = std::clamp(static_cast<int>(std::floor(y0)), 0, height - 1);
  const int yb = std::clamp(static_cast<int>(std::ceil(y1)), 0, height - 1);
  // Orientation of the quad (either winding), then "inside or on an edge" for each pixel centre.
  double area2 = 0;
  for (int k = 0; k < 4; ++k) area2 += t[k].x * t[(k + 1) % 4].y - t[(k + 1) % 4].x * t[k].y;
  const double sign = area2 < 0 ? -1.0 : 1.0;
  double sum = 0;
  int64_t n = 0;
  for (int y = ya; y <= yb; ++y)
    for (int x = xa; x <= xb; ++x) {
      bool inside = true;
      for (int k = 0; k < 4 && inside; ++k) inside = sign * cross(t[k], t[(k + 1) % 4], Point{double(x), double(y)}) >= -1e-9;
      if (inside) sum += prob[static_cast<size_t>(y) * width + x], ++n;
    }
  return n ? static_cast<float>(sum / n) : 0.f;
}

std::vector<DbBox> db_boxes(const float* prob, int width, int height, const DbParams& p) {
  std::vector<DbBox> out;
  const size_t total = static_cast<size_t>(width) * height;
  std::vector<uint8_t> fg(total), seen(total);
  for (size_t i = 0; i < total; ++i) fg[i] = prob[i] > p.thresh;
  std::vector<int64_t> stack;
  int candidates = 0;
  for (size_t start = 0; start < total && candidates < p.max_candidates; ++start) {
    if (!fg[start] || seen[start]) continue;
    ++candidates;
    std::vector<Point> boundary;
    stack.assign(1, static_cast<int64_t>(start));
    seen[start] = 1;
    while (!stack.empty()) {
      const int64_t i = stack.back();
      stack.pop_back();
      const int x = static_cast<int>(i % width), y = static_cast<int>(i / width);
      bool edge = false;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = x + dx, ny = y + dy;
          const bool in = nx >= 0 && ny >= 0 && nx < width && ny < height;
          const size_t j = in ? static_cast<size_t>(ny) * width + nx : 0;
          if (!in || !fg[j]) {
            edge = edge || (dx == 0) != (dy == 0);  // a 4-neighbour outside: a contour pixel
            continue;
          }
          if (!seen[j]) seen[j] = 1, stack.push_back(static_cast<int64_t>(j));
        }
      if (edge) boundary.push_back({double(x), double(y)});
    }
    double side = 0;
    const Quad q = min_area_rect(std::move(boundary), &side);
    if (side < p.min_size) continue;
    const float score = box_score(prob, width, height, q);
    if (score < p.box_thresh) continue;
    // Unclip: the rectangle offset outwards by d = area * ratio / perimeter (a rounded offset of a
    // rectangle has exactly this minimum-area rectangle).
    const double w = dist(q[0], q[1]), h = dist(q[0], q[3]);
    if (w + h <= 0) continue;
    const double d = w * h * p.unclip_ratio / (2 * (w + h));
    const Point u{(q[1].x - q[0].x) / std::max(w, 1e-12), (q[1].y - q[0].y) / std::max(w, 1e-12)};
    const Point v{(q[3].x - q[0].x) / std::max(h, 1e-12), (q[3].y - q[0].y) / std::max(h, 1e-12)};
    auto shift = [&](const Point& c, double su, double sv) {
      return Point{c.x + d * (su * u.x + sv * v.x), c.y + d * (su * u.y + sv * v.y)};
    };
    double side2 = 0;
    const Quad e = min_area_rect({shift(q[0], -1, -1), shift(q[1], 1, -1), shift(q[2], 1, 1), shift(q[3], -1, 1)}, &side2);
    if (side2 < p.min_size + 2) continue;
    out.push_back({e, score});
  }
  return out;
}

void sort_reading_order(std::vector<Quad>& quads, std::vector<size_t>& order) {
  order.resize(quads.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return quads[a][0].y < quads[b][0].y || (quads[a][0].y == quads[b][0].y && quads[a][0].x < quads[b][0].x);
  });
  for (size_t i = 0; i + 1 < order.size(); ++i)
    for (size_t j = i + 1; j-- > 0;) {
      const Quad& a = quads[order[j]];
      const Quad& b = quads[order[j + 1]];
      if (std::abs(b[0].y - a[0].y) < 10 && b[0].x < a[0].x) std::swap(order[j], order[j + 1]);
      else break;
    }
}

}  // namespace glassbox::vision::ocr
