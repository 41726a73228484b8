// RoiAlign (opsets 10 and 16): average or max of bilinear samples over each
// output bin of each region of interest. float32 X [N, C, H, W], rois
// [num_rois, 4] (x1, y1, x2, y2 in input coordinates / spatial_scale),
// batch_indices [num_rois] -> [num_rois, C, output_height, output_width].
// Opset 10 has no coordinate_transformation_mode (behaves as output_half_pixel).
#include <algorithm>
#include <cmath>

#include "kernels/sampling.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct RoiAlignAttrs {
  kernels::RoiAlignParams p;  // mode ("avg"), coordinate_transformation_mode ("half_pixel" at 16),
                              // output_height/width (1), sampling_ratio (0), spatial_scale (1.0)
};

// Samples per bin side beyond which the op refuses (a compute bomb, not a real model).
constexpr float kMaxSamplesPerSide = 1 << 16;
constexpr double kMaxSamplesPerBin = double(1 << 24);

class RoiAlignOp final : public Op {
 public:
  explicit RoiAlignOp(RoiAlignAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* rois, require_input(ctx, 1, "rois"));
    GB_ASSIGN_OR_RETURN(const Tensor* bi, require_input(ctx, 2, "batch_indices"));
    if (x->dtype() != DataType::kFloat32 || rois->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kUnsupported, "RoiAlign supports float32 X and rois");
    if (x->rank() != 4) return op_error(ctx, ErrorCode::kInvalidArgument, "X must be 4-D [N, C, H, W]");
    if (rois->rank() != 2 || rois->shape()[1] != 4)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "rois must have shape [num_rois, 4], got " + shape_to_string(rois->shape()));
    const int64_t num_rois = rois->shape()[0];
    if (bi->rank() != 1 || bi->shape()[0] != num_rois)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "batch_indices must have shape [" + std::to_string(num_rois) + "], got " +
                          shape_to_string(bi->shape()));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> batch, tensor_to_int64s(*bi, "batch_indices"));
    const Shape& xs = x->shape();
    for (int64_t r = 0; r < num_rois; ++r) {
      if (batch[r] < 0 || batch[r] >= xs[0])
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch[r]) +
                            " is out of range for batch size " + std::to_string(xs[0]));
      for (int k = 0; k < 4; ++k) {
        const float v = rois->data<float>()[r * 4 + k] * a_.p.spatial_scale;
        if (!std::isfinite(v) || std::fabs(v) > kMaxSamplesPerSide * 16)
          return op_error(ctx, ErrorCode::kInvalidArgument, "rois[" + std::to_string(r) + "] is not finite or too large");
      }
    }
    if (a_.p.sampling_ratio == 0) {  // adaptive sampling: refuse absurd sample counts per bin
      for (int64_t r = 0; r < num_rois; ++r) {
        const float* roi = rois->data<float>() + r * 4;
        const double gw = std::max(0.0, std::ceil((roi[2] - roi[0]) * a_.p.spatial_scale / static_cast<double>(a_.p.output_width)));
        const double gh = std::max(0.0, std::ceil((roi[3] - roi[1]) * a_.p.spatial_scale / static_cast<double>(a_.p.output_height)));
        if (gw * gh > kMaxSamplesPerBin)
          return op_error(ctx, ErrorCode::kLimitExceeded,
                          "rois[" + std::to_string(r) + "] needs " + std::to_string(gw * gh) +
                              " samples per output bin (limit 2^24)",
                          "set sampling_ratio or check the rois");
      }
    }
    if ((xs[2] == 0 || xs[3] == 0) && num_rois > 0 && xs[1] > 0)
      return op_error(ctx, ErrorCode::kInvalidArgument, "X has an empty spatial dim");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32,
                                                        Shape{num_rois, xs[1], a_.p.output_height, a_.p.output_width}));
    kernels::roi_align_f32(a_.p, xs[1], xs[2], xs[3], num_rois, x->data<float>(), rois->data<float>(), batch.data(),
                           y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  RoiAlignAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_RoiAlign(const graph::Node& node, int64_t opset) {
  if (opset >= 16)
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"mode", "output_height", "output_width", "sampling_ratio",
                                                "spatial_scale", "coordinate_transformation_mode"}));
  else
    GB_RETURN_IF_ERROR(
        check_known_attrs(node, {"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"}));
  RoiAlignAttrs a;
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "avg"));
  GB_ASSIGN_OR_RETURN(std::string ctm, attr_string(node, "coordinate_transformation_mode",
                                                   opset >= 16 ? "half_pixel" : "output_half_pixel"));
  GB_ASSIGN_OR_RETURN(a.p.output_height, attr_int(node, "output_height", 1));
  GB_ASSIGN_OR_RETURN(a.p.output_width, attr_int(node, "output_width", 1));
  GB_ASSIGN_OR_RETURN(a.p.sampling_ratio, attr_int(node, "sampling_ratio", 0));
  GB_ASSIGN_OR_RETURN(a.p.spatial_scale, attr_float(node, "spatial_scale", 1.f));
  if (mode != "avg" && mode != "max") return unsupported_attr("mode", "'" + mode + "' is not avg or max");
  a.p.max_mode = mode == "max";
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return unsupported_attr("coordinate_transformation_mode", "'" + ctm + "' is not half_pixel or output_half_pixel");
  a.p.half_pixel = ctm == "half_pixel";
  if (a.p.output_height < 1 || a.p.output_width < 1 || a.p.output_height > (1 << 20) || a.p.output_width > (1 << 20))
    return unsupported_attr("output_height/output_width", "must lie in [1, 2^20]");
  if (a.p.sampling_ratio < 0 || a.p.sampling_ratio > 4096)
    return unsupported_attr("sampling_ratio", "must lie in [0, 4096]");
  if (!std::isfinite(a.p.spatial_scale)) return unsupported_attr("spatial_scale", "must be finite");
  return std::unique_ptr<Op>(new RoiAlignOp(a));
}

}  // namespace glassbox::ops
