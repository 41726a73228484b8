// MaxPool (float32): kernel_shape, strides, pads/auto_pad, dilations and
// ceil_mode (opset 10+), optional Indices output with storage_order (opset 8+).
#include "ops/conv_attrs.h"

namespace glassbox::ops {
namespace {

struct MaxPoolAttrs {
  nn::SpatialAttrs spatial;   // kernel_shape (required), strides, pads, auto_pad, dilations, ceil_mode
  int64_t storage_order = 0;  // Indices layout: 0 row-major, 1 column-major
};

class MaxPoolOp final : public Op {
 public:
  explicit MaxPoolOp(MaxPoolAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    const DataType dt = x->dtype();
    if (dt != DataType::kFloat32 && dt != DataType::kUInt8 && dt != DataType::kInt8)
      return nn::node_error(ctx, ErrorCode::kUnsupported,
                            std::string("X has dtype ") + dtype_name(dt) + "; MaxPool supports float32, uint8, int8");
    Shape out;
    GB_ASSIGN_OR_RETURN(kernels::PoolGeometry g, nn::pool_geometry(ctx, a_.spatial, *x, out));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, dt, out));
    int64_t* idx = nullptr;
    if (ctx.num_outputs() > 1) {
      GB_ASSIGN_OR_RETURN(Tensor* it, ctx.allocate_output(1, DataType::kInt64, out));
      idx = it->mutable_data<int64_t>();
    }
    const int so = static_cast<int>(a_.storage_order);
    if (dt == DataType::kFloat32)
      kernels::max_pool_f32(g, x->data<float>(), y->mutable_data<float>(), idx, so, &ctx.pool());
    else if (dt == DataType::kUInt8)
      kernels::max_pool_u8(g, x->data<uint8_t>(), y->mutable_data<uint8_t>(), idx, so, &ctx.pool());
    else
      kernels::max_pool_i8(g, x->data<int8_t>(), y->mutable_data<int8_t>(), idx, so, &ctx.pool());
    return Status::ok_status();
  }

 private:
  MaxPoolAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_MaxPool(const graph::Node& node, int64_t) {
  MaxPoolAttrs a;
  GB_ASSIGN_OR_RETURN(a.spatial, nn::parse_spatial_attrs(node));
  GB_ASSIGN_OR_RETURN(a.storage_order, attr_int(node, "storage_order", 0));
  if (a.spatial.kernel_shape.empty()) return make_error(ErrorCode::kInvalidModel, "attribute 'kernel_shape' is required");
  if (a.storage_order != 0 && a.storage_order != 1)
    return make_error(ErrorCode::kInvalidModel, "storage_order must be 0 or 1");
  return std::unique_ptr<Op>(new MaxPoolOp(std::move(a)));
}

}  // namespace glassbox::ops
