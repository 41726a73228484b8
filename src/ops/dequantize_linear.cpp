// DequantizeLinear (opset 10+): y = (x - x_zero_point) * x_scale, float32.
// x uint8, int8 or int32 (int32 only with a zero x_zero_point, per the spec);
// x_zero_point has x's dtype. Opset 13 adds `axis` (default 1) for a 1-D x_scale.
#include "ops/quant_common.h"

namespace glassbox::ops {
namespace {

struct DequantizeLinearAttrs {
  int64_t axis = 1;  // opset 13+: the axis of a 1-D x_scale / x_zero_point
};

class DequantizeLinearOp final : public Op {
 public:
  DequantizeLinearOp(DequantizeLinearAttrs a, bool per_axis) : a_(a), per_axis_(per_axis) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "x"));
    GB_ASSIGN_OR_RETURN(const Tensor* scale, nn::need_input(ctx, 1, "x_scale"));
    const Tensor* zp = ctx.input(2);
    if (zp && zp->dtype() != x->dtype())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("x_zero_point has dtype ") + dtype_name(zp->dtype()) + ", x has " +
                                dtype_name(x->dtype()));
    GB_ASSIGN_OR_RETURN(quant::QuantParams q, quant::read_quant_params(ctx, *x, *scale, zp, a_.axis, per_axis_));
    if (x->dtype() == DataType::kInt32)
      for (int32_t z : q.zero_point)
        if (z != 0)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument, "int32 x needs a zero x_zero_point (spec)");
    return dispatch_dtype<TypeList<uint8_t, int8_t, int32_t>>(x->dtype(), "DequantizeLinear x", [&]<class Q>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
      kernels::dequantize_linear(x->data<Q>(), q.scale.data(), q.zero_point.data(), y->mutable_data<float>(), q.outer,
                                 q.axis_dim, q.inner);
      return Status::ok_status();
    });
  }

 private:
  DequantizeLinearAttrs a_;
  bool per_axis_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_DequantizeLinear(const graph::Node& node, int64_t opset) {
  DequantizeLinearAttrs a;
  if (opset >= 13) {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis"}));
    GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 1));
  } else {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  }
  return std::unique_ptr<Op>(new DequantizeLinearOp(a, opset >= 13));
}

}  // namespace glassbox::ops
