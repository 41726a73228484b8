// Resize (float32), opsets 10-17: nearest / linear / cubic with every
// coordinate_transformation_mode of opset 11-17, nearest_mode, cubic_coeff_a,
// exclude_outside, extrapolation_value; output size from scales or sizes.
// Opset 10 has only `mode` and behaves like Upsample (asymmetric coordinates).
#include <cmath>

#include "ops/resize_common.h"

namespace glassbox::ops {
namespace {

struct ResizeAttrs {
  kernels::ResizeMode mode = kernels::ResizeMode::kNearest;             // "nearest" | "linear" | "cubic"
  kernels::CoordMode coord = kernels::CoordMode::kHalfPixel;            // coordinate_transformation_mode
  kernels::NearestMode nearest = kernels::NearestMode::kRoundPreferFloor;  // nearest_mode
  float cubic_coeff_a = -0.75f;                                         // cubic kernel parameter
  int64_t exclude_outside = 0;                                          // 1: zero weights outside the input
  float extrapolation_value = 0.f;                                      // tf_crop_and_resize outside the input
  int64_t opset = 11;
};

class ResizeOp final : public Op {
 public:
  explicit ResizeOp(ResizeAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    const int64_t r = x->rank();
    const Tensor* roi = a_.opset >= 11 ? ctx.input(1) : nullptr;
    const Tensor* scales = ctx.input(a_.opset >= 11 ? 2 : 1);
    const Tensor* sizes = a_.opset >= 11 ? ctx.input(3) : nullptr;
    if (scales && scales->numel() == 0) scales = nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if ((scales == nullptr) == (sizes == nullptr))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "exactly one of scales and sizes must be given");
    std::vector<kernels::ResizeAxisParams> params(static_cast<size_t>(r));
    Shape out(static_cast<size_t>(r));
    if (scales) {
      GB_RETURN_IF_ERROR(nn::need_float32(ctx, *scales, "scales"));
      if (scales->numel() != r)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "scales has " + std::to_string(scales->numel()) + " entries for input rank " +
                                  std::to_string(r));
      for (int64_t d = 0; d < r; ++d) {
        const float s = scales->data<float>()[d];
        if (!(s > 0.f) || !std::isfinite(s))
          return nn::node_error(ctx, ErrorCode::kInvalidArgument, "scales must be positive and finite");
        const double o = std::floor(static_cast<double>(x->shape()[d]) * s);
        if (o > 9.0e15) return nn::node_error(ctx, ErrorCode::kLimitExceeded, "scaled output dim is too large");
        out[d] = static_cast<int64_t>(o);
        params[d].scale = s;
      }
    } else {
      GB_ASSIGN_OR_RETURN(std::vector<int64_t> sz, nn::read_ints(ctx, *sizes, "sizes"));
      if (static_cast<int64_t>(sz.size()) != r)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "sizes must have one entry per input dim");
      for (int64_t d = 0; d < r; ++d) {
        if (sz[d] < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "sizes has a negative entry");
        out[d] = sz[d];
        params[d].scale = x->shape()[d] ? static_cast<float>(static_cast<double>(sz[d]) / x->shape()[d]) : 1.f;
      }
    }
    std::vector<float> roi_v;
    if (a_.coord == kernels::CoordMode::kTfCropAndResize) {
      if (!roi || roi->numel() != 2 * r || roi->dtype() != DataType::kFloat32)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "tf_crop_and_resize needs a float32 roi of 2 * rank entries");
      roi_v.assign(roi->data<float>(), roi->data<float>() + 2 * r);
    }
    for (int64_t d = 0; d < r; ++d) {
      auto& p = params[d];
      p.mode = a_.mode;
      p.coord = a_.coord;
      p.nearest = a_.nearest;
      p.cubic_a = a_.cubic_coeff_a;
      p.exclude_outside = a_.exclude_outside != 0;
      if (!roi_v.empty()) {
        p.roi_start = roi_v[d];
        p.roi_end = roi_v[d + r];
      }
    }
    return nn::run_resize(ctx, *x, out, params, a_.extrapolation_value);
  }

 private:
  ResizeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Resize(const graph::Node& node, int64_t opset) {
  ResizeAttrs a;
  a.opset = opset;
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "nearest"));
  if (mode == "nearest") a.mode = kernels::ResizeMode::kNearest;
  else if (mode == "linear") a.mode = kernels::ResizeMode::kLinear;
  else if (mode == "cubic" && opset >= 11) a.mode = kernels::ResizeMode::kCubic;
  else return make_error(ErrorCode::kUnsupported, "Resize mode '" + mode + "' is not supported at this opset");
  if (opset < 11) {
    a.coord = kernels::CoordMode::kAsymmetric;
    a.nearest = kernels::NearestMode::kSimple;
    return std::unique_ptr<Op>(new ResizeOp(a));
  }
  GB_ASSIGN_OR_RETURN(std::string coord, attr_string(node, "coordinate_transformation_mode", "half_pixel"));
  if (coord == "half_pixel") a.coord = kernels::CoordMode::kHalfPixel;
  else if (coord == "pytorch_half_pixel") a.coord = kernels::CoordMode::kPytorchHalfPixel;
  else if (coord == "align_corners") a.coord = kernels::CoordMode::kAlignCorners;
  else if (coord == "asymmetric") a.coord = kernels::CoordMode::kAsymmetric;
  else if (coord == "tf_half_pixel_for_nn" && opset < 13) a.coord = kernels::CoordMode::kTfHalfPixelForNn;
  else if (coord == "tf_crop_and_resize") a.coord = kernels::CoordMode::kTfCropAndResize;
  else return make_error(ErrorCode::kUnsupported, "coordinate_transformation_mode '" + coord + "' is not supported");
  GB_ASSIGN_OR_RETURN(std::string nearest, attr_string(node, "nearest_mode", "round_prefer_floor"));
  if (nearest == "round_prefer_floor") a.nearest = kernels::NearestMode::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil") a.nearest = kernels::NearestMode::kRoundPreferCeil;
  else if (nearest == "floor") a.nearest = kernels::NearestMode::kFloor;
  else if (nearest == "ceil") a.nearest = kernels::NearestMode::kCeil;
  else return make_error(ErrorCode::kUnsupported, "nearest_mode '" + nearest + "' is not supported");
  GB_ASSIGN_OR_RETURN(a.cubic_coeff_a, attr_float(node, "cubic_coeff_a", -0.75f));
  GB_ASSIGN_OR_RETURN(a.exclude_outside, attr_int(node, "exclude_outside", 0));
  GB_ASSIGN_OR_RETURN(a.extrapolation_value, attr_float(node, "extrapolation_value", 0.f));
  return std::unique_ptr<Op>(new ResizeOp(a));
}

}  // namespace glassbox::ops
