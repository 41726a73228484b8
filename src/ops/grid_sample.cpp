// GridSample (opset 16, 4-D input): samples X [N, C, H, W] at the normalized
// (x, y) locations of grid [N, H_out, W_out, 2] -> [N, C, H_out, W_out]. float32.
// Modes bilinear / nearest / bicubic, padding zeros / border / reflection,
// align_corners 0/1 (kernel: src/kernels/sampling.cpp).
#include "kernels/sampling.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct GridSampleAttrs {
  kernels::GridSampleParams p;  // mode ("bilinear"), padding_mode ("zeros"), align_corners (0)
};

class GridSampleOp final : public Op {
 public:
  explicit GridSampleOp(GridSampleAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* grid, require_input(ctx, 1, "grid"));
    if (x->dtype() != DataType::kFloat32 || grid->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kUnsupported,
                      std::string("GridSample supports float32 X and grid, got ") + dtype_name(x->dtype()) + " and " +
                          dtype_name(grid->dtype()));
    if (x->rank() != 4)
      return op_error(ctx, ErrorCode::kUnsupported,
                      "X must be 4-D [N, C, H, W] (opset 16), got " + shape_to_string(x->shape()));
    const Shape& xs = x->shape();
    const Shape& gs = grid->shape();
    if (grid->rank() != 4 || gs[0] != xs[0] || gs[3] != 2)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "grid must have shape [N, H_out, W_out, 2] with N = " + std::to_string(xs[0]) + ", got " +
                          shape_to_string(gs));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, Shape{xs[0], xs[1], gs[1], gs[2]}));
    kernels::grid_sample_2d_f32(a_.p, xs[0], xs[1], xs[2], xs[3], gs[1], gs[2], x->data<float>(), grid->data<float>(),
                                y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  GridSampleAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_GridSample(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"mode", "padding_mode", "align_corners"}));
  GridSampleAttrs a;
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "bilinear"));
  GB_ASSIGN_OR_RETURN(std::string padding, attr_string(node, "padding_mode", "zeros"));
  GB_ASSIGN_OR_RETURN(int64_t align, attr_int(node, "align_corners", 0));
  if (mode == "bilinear") a.p.mode = kernels::GridSampleMode::kBilinear;
  else if (mode == "nearest") a.p.mode = kernels::GridSampleMode::kNearest;
  else if (mode == "bicubic") a.p.mode = kernels::GridSampleMode::kBicubic;
  else return unsupported_attr("mode", "'" + mode + "' is not bilinear, nearest or bicubic");
  if (padding == "zeros") a.p.padding = kernels::GridSamplePadding::kZeros;
  else if (padding == "border") a.p.padding = kernels::GridSamplePadding::kBorder;
  else if (padding == "reflection") a.p.padding = kernels::GridSamplePadding::kReflection;
  else return unsupported_attr("padding_mode", "'" + padding + "' is not zeros, border or reflection");
  if (align != 0 && align != 1) return unsupported_attr("align_corners", "must be 0 or 1");
  a.p.align_corners = align == 1;
  return std::unique_ptr<Op>(new GridSampleOp(a));
}

}  // namespace glassbox::ops
