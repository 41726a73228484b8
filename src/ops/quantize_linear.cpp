// QuantizeLinear (opset 10+): y = saturate(round_half_even(x / y_scale) + y_zero_point).
// x float32 or int32; y has y_zero_point's dtype (uint8 when absent; int8 too).
// Opset 13 adds `axis` (default 1): a 1-D y_scale quantizes per slice of that axis.
#include <type_traits>

#include "ops/quant_common.h"

namespace glassbox::ops {
namespace {

struct QuantizeLinearAttrs {
  int64_t axis = 1;  // opset 13+: the axis of a 1-D y_scale / y_zero_point
};

class QuantizeLinearOp final : public Op {
 public:
  QuantizeLinearOp(QuantizeLinearAttrs a, bool per_axis) : a_(a), per_axis_(per_axis) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "x"));
    GB_ASSIGN_OR_RETURN(const Tensor* scale, nn::need_input(ctx, 1, "y_scale"));
    const Tensor* zp = ctx.input(2);
    GB_ASSIGN_OR_RETURN(quant::QuantParams q, quant::read_quant_params(ctx, *x, *scale, zp, a_.axis, per_axis_));
    const DataType out_dt = zp ? zp->dtype() : DataType::kUInt8;
    return dispatch_dtype<TypeList<float, int32_t>>(x->dtype(), "QuantizeLinear x", [&]<class X>() -> Status {
      return dispatch_dtype<TypeList<uint8_t, int8_t>>(out_dt, "QuantizeLinear y_zero_point", [&]<class Q>() -> Status {
        GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, x->shape()));
        if constexpr (std::is_same_v<X, float> && std::is_same_v<Q, uint8_t>) {
          if (q.axis_dim == 1) {  // per tensor, float -> uint8 (QDQ activations): vectorized, same results
            kernels::quantize_f32_u8(x->data<float>(), x->numel(), q.scale[0], q.zero_point[0],
                                     y->mutable_data<uint8_t>());
            return Status::ok_status();
          }
        }
        kernels::quantize_linear(x->data<X>(), q.scale.data(), q.zero_point.data(), y->mutable_data<Q>(), q.outer,
                                 q.axis_dim, q.inner);
        return Status::ok_status();
      });
    });
  }

 private:
  QuantizeLinearAttrs a_;
  bool per_axis_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_QuantizeLinear(const graph::Node& node, int64_t opset) {
  QuantizeLinearAttrs a;
  if (opset >= 13) {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis"}));
    GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 1));
  } else {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  }
  return std::unique_ptr<Op>(new QuantizeLinearOp(a, opset >= 13));
}

}  // namespace glassbox::ops
