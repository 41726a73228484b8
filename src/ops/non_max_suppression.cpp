// NonMaxSuppression (opset 10+): per batch and class, greedily keeps the
// highest-scoring boxes whose IoU with every kept box is <= iou_threshold.
// Output selected_indices [num_selected, 3] int64 = (batch, class, box).
// Equal scores keep the lower box index first (a stable order, as onnxruntime);
// NaN scores are never selected.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct NonMaxSuppressionAttrs {
  int64_t center_point_box = 0;  // 0: [y1, x1, y2, x2] (any diagonal corners); 1: [x_center, y_center, w, h]
};

struct Corners {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

Corners corners(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2.f, hh = b[3] / 2.f;
    return {b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the IoU of a and b exceeds the threshold. Boxes with no area never suppress.
bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0.f || iw <= 0.f) return false;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0.f || area_b <= 0.f) return false;
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter) > iou_threshold;
}

class NonMaxSuppressionOp final : public Op {
 public:
  explicit NonMaxSuppressionOp(NonMaxSuppressionAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* boxes, require_input(ctx, 0, "boxes"));
    GB_ASSIGN_OR_RETURN(const Tensor* scores, require_input(ctx, 1, "scores"));
    if (boxes->dtype() != DataType::kFloat32 || scores->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kUnsupported, "boxes and scores must be float32");
    if (boxes->rank() != 3 || boxes->shape()[2] != 4)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "boxes must have shape [batch, boxes, 4], got " + shape_to_string(boxes->shape()));
    if (scores->rank() != 3 || scores->shape()[0] != boxes->shape()[0] || scores->shape()[2] != boxes->shape()[1])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "scores must have shape [batch, classes, boxes] matching boxes " +
                          shape_to_string(boxes->shape()) + ", got " + shape_to_string(scores->shape()));
    int64_t max_out = 0;
    float iou_threshold = 0.f;
    bool has_score_threshold = false;
    float score_threshold = 0.f;
    if (const Tensor* t = ctx.input(2); t && t->numel() > 0) {
      GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*t, "max_output_boxes_per_class"));
      if (v.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, "max_output_boxes_per_class must hold one value");
      max_out = v[0];
    }
    GB_RETURN_IF_ERROR(read_scalar(ctx, 3, "iou_threshold", &iou_threshold, nullptr));
    GB_RETURN_IF_ERROR(read_scalar(ctx, 4, "score_threshold", &score_threshold, &has_score_threshold));
    if (iou_threshold < 0.f || iou_threshold > 1.f)
      return op_error(ctx, ErrorCode::kInvalidArgument, "iou_threshold must lie in [0, 1]");

    const int64_t nb = boxes->shape()[0], nc = scores->shape()[1], n = boxes->shape()[1];
    const float* pb = boxes->data<float>();
    const float* ps = scores->data<float>();
    std::vector<int64_t> selected;  // triples
    if (max_out > 0) {
      std::vector<Corners> c(static_cast<size_t>(n));
      std::vector<int64_t> order;
      std::vector<int64_t> kept;
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t i = 0; i < n; ++i) c[i] = corners(pb + (b * n + i) * 4, a_.center_point_box != 0);
        for (int64_t k = 0; k < nc; ++k) {
          const float* s = ps + (b * nc + k) * n;
          order.clear();
          for (int64_t i = 0; i < n; ++i)
            if (!std::isnan(s[i]) && (!has_score_threshold || s[i] > score_threshold)) order.push_back(i);
          std::stable_sort(order.begin(), order.end(), [&](int64_t u, int64_t v) { return s[u] > s[v]; });
          kept.clear();
          for (int64_t i : order) {
            if (static_cast<int64_t>(kept.size()) >= max_out) break;
            bool keep = true;
            for (int64_t j : kept) keep = keep && !suppresses(c[i], c[j], iou_threshold);
            if (!keep) continue;
            kept.push_back(i);
            selected.insert(selected.end(), {b, k, i});
          }
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected.size() / 3);
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, Shape{count, 3}));
    std::copy(selected.begin(), selected.end(), y->mutable_data<int64_t>());
    return {};
  }

 private:
  static Status read_scalar(const ComputeContext& ctx, size_t i, const char* what, float* out, bool* present) {
    const Tensor* t = ctx.input(i);
    if (!t || t->numel() == 0) return {};
    if (t->dtype() != DataType::kFloat32 || t->numel() != 1)
      return op_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must be one float32 value");
    *out = t->data<float>()[0];
    if (present) *present = true;
    return {};
  }

  NonMaxSuppressionAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_NonMaxSuppression(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"center_point_box"}));
  NonMaxSuppressionAttrs a;
  GB_ASSIGN_OR_RETURN(a.center_point_box, attr_int(node, "center_point_box", a.center_point_box));
  if (a.center_point_box != 0 && a.center_point_box != 1)
    return unsupported_attr("center_point_box", "must be 0 or 1");
  return std::unique_ptr<Op>(new NonMaxSuppressionOp(a));
}

}  // namespace glassbox::ops
