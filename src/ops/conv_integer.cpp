// ConvInteger (opset 10): int32 y = conv(x - x_zero_point, w - w_zero_point) for
// uint8/int8 x and w; Conv's attributes (pads, auto_pad, strides, dilations,
// group, kernel_shape). x_zero_point is a scalar, w_zero_point a scalar or one
// per output channel. Padding contributes 0 (the pad value is x's zero point).
#include "ops/quant_common.h"

namespace glassbox::ops {
namespace {

class ConvIntegerOp final : public Op {
 public:
  explicit ConvIntegerOp(quant::IntegerConvAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "x"));
    GB_ASSIGN_OR_RETURN(const Tensor* w, nn::need_input(ctx, 1, "w"));
    Shape out;
    GB_ASSIGN_OR_RETURN(kernels::ConvGeometry g, quant::integer_conv_geometry(ctx, a_.spatial, a_.group, *x, *w, out));
    GB_ASSIGN_OR_RETURN(auto xz, quant::conv_zero_points(ctx, ctx.input(2), x->dtype(), 0, "x_zero_point"));
    GB_ASSIGN_OR_RETURN(auto wz, quant::conv_zero_points(ctx, ctx.input(3), w->dtype(), g.c_out, "w_zero_point"));
    using Types = TypeList<uint8_t, int8_t>;
    return dispatch_dtype<Types>(x->dtype(), "ConvInteger x", [&]<class TX>() -> Status {
      return dispatch_dtype<Types>(w->dtype(), "ConvInteger w", [&]<class TW>() -> Status {
        GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, out));
        kernels::conv_integer_reference(g, x->data<TX>(), xz[0], w->data<TW>(), wz.data(), y->mutable_data<int32_t>());
        return Status::ok_status();
      });
    });
  }

 private:
  quant::IntegerConvAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ConvInteger(const graph::Node& node, int64_t) {
  GB_ASSIGN_OR_RETURN(quant::IntegerConvAttrs a, quant::parse_integer_conv_attrs(node));
  return std::unique_ptr<Op>(new ConvIntegerOp(std::move(a)));
}

}  // namespace glassbox::ops
