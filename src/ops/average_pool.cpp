// AveragePool (float32): kernel_shape, strides, pads/auto_pad,
// count_include_pad (opset 7), ceil_mode (opset 10).
#include "ops/conv_attrs.h"

namespace glassbox::ops {
namespace {

struct AveragePoolAttrs {
  nn::SpatialAttrs spatial;       // kernel_shape (required), strides, pads, auto_pad, ceil_mode
  int64_t count_include_pad = 0;  // 1: padded positions count in the divisor
};

class AveragePoolOp final : public Op {
 public:
  explicit AveragePoolOp(AveragePoolAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    Shape out;
    GB_ASSIGN_OR_RETURN(kernels::PoolGeometry g, nn::pool_geometry(ctx, a_.spatial, *x, out));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, out));
    kernels::avg_pool_f32(g, x->data<float>(), y->mutable_data<float>(), a_.count_include_pad != 0, &ctx.pool());
    return Status::ok_status();
  }

 private:
  AveragePoolAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_AveragePool(const graph::Node& node, int64_t) {
  AveragePoolAttrs a;
  GB_ASSIGN_OR_RETURN(a.spatial, nn::parse_spatial_attrs(node));
  GB_ASSIGN_OR_RETURN(a.count_include_pad, attr_int(node, "count_include_pad", 0));
  if (a.spatial.kernel_shape.empty()) return make_error(ErrorCode::kInvalidModel, "attribute 'kernel_shape' is required");
  return std::unique_ptr<Op>(new AveragePoolOp(std::move(a)));
}

}  // namespace glassbox::ops
