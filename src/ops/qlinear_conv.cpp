// QLinearConv (opset 10): quantized convolution.
//   acc = conv(x - x_zero_point, w - w_zero_point[m]) + B[m]   (int32)
//   y   = saturate(round_half_even(acc * (x_scale * w_scale[m] / y_scale)) + y_zero_point)
// x, w, y uint8/int8; w_scale / w_zero_point scalar or one per output channel;
// B int32 [M] optional. The rescale is done in float32, in that order, as
// onnxruntime does. Conv's attributes; padding contributes 0.
#include "ops/quant_common.h"

namespace glassbox::ops {
namespace {

Result<std::vector<float>> read_scales(const ComputeContext& ctx, const Tensor& s, int64_t per_channel_len,
                                       const char* what) {
  if (s.dtype() != DataType::kFloat32)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must be float32");
  const int64_t n = per_channel_len > 0 ? per_channel_len : 1;
  if (s.numel() == 1) return std::vector<float>(static_cast<size_t>(n), s.data<float>()[0]);
  if (s.numel() != n || s.rank() != 1)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string(what) + " " + shape_to_string(s.shape()) + " must be a scalar" +
                              (per_channel_len > 0 ? " or have one entry per output channel" : ""));
  return std::vector<float>(s.data<float>(), s.data<float>() + n);
}

class QLinearConvOp final : public Op {
 public:
  explicit QLinearConvOp(quant::IntegerConvAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    const char* names[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"};
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      // y_zero_point is optional (then uint8 0); x/w zero points are required by the spec.
      if (i == 7 && !ctx.input(7)) {
        in[i] = nullptr;
        continue;
      }
      GB_ASSIGN_OR_RETURN(in[i], nn::need_input(ctx, i, names[i]));
    }
    const Tensor* x = in[0];
    const Tensor* w = in[3];
    const Tensor* bias = ctx.input(8);
    Shape out;
    GB_ASSIGN_OR_RETURN(kernels::ConvGeometry g, quant::integer_conv_geometry(ctx, a_.spatial, a_.group, *x, *w, out));
    const int64_t M = g.c_out;
    GB_ASSIGN_OR_RETURN(auto xs, read_scales(ctx, *in[1], 0, "x_scale"));
    GB_ASSIGN_OR_RETURN(auto ws, read_scales(ctx, *in[4], M, "w_scale"));
    GB_ASSIGN_OR_RETURN(auto ys, read_scales(ctx, *in[6], 0, "y_scale"));
    GB_ASSIGN_OR_RETURN(auto xz, quant::conv_zero_points(ctx, in[2], x->dtype(), 0, "x_zero_point"));
    GB_ASSIGN_OR_RETURN(auto wz, quant::conv_zero_points(ctx, in[5], w->dtype(), M, "w_zero_point"));
    const DataType y_dt = in[7] ? in[7]->dtype() : DataType::kUInt8;
    GB_ASSIGN_OR_RETURN(auto yz, quant::conv_zero_points(ctx, in[7], y_dt, 0, "y_zero_point"));
    if (bias && (bias->dtype() != DataType::kInt32 || bias->shape() != Shape{M}))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("B ") + dtype_name(bias->dtype()) + shape_to_string(bias->shape()) +
                                " must be int32[" + std::to_string(M) + "]");
    std::vector<float> mult(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) mult[m] = xs[0] * ws[m] / ys[0];
    GB_ASSIGN_OR_RETURN(int64_t out_numel, shape_numel(out));
    using Types = TypeList<uint8_t, int8_t>;
    return dispatch_dtype<Types>(x->dtype(), "QLinearConv x", [&]<class TX>() -> Status {
      return dispatch_dtype<Types>(w->dtype(), "QLinearConv w", [&]<class TW>() -> Status {
        return dispatch_dtype<Types>(y_dt, "QLinearConv y_zero_point", [&]<class TY>() -> Status {
          GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, y_dt, out));
          GB_ASSIGN_OR_RETURN(Tensor acc, ctx.allocate_scratch(DataType::kInt32, out));
          int32_t* pa = acc.mutable_data<int32_t>();
          kernels::conv_integer_reference(g, x->data<TX>(), xz[0], w->data<TW>(), wz.data(), pa);
          const int64_t plane = M > 0 && g.n > 0 ? out_numel / (g.n * M) : 0;
          TY* py = y->mutable_data<TY>();
          for (int64_t i = 0; i < out_numel; ++i) {
            const int64_t m = (i / plane) % M;
            const int32_t v = pa[i] + (bias ? bias->data<int32_t>()[m] : 0);
            py[i] = kernels::saturate_round<TY>(static_cast<float>(v) * mult[m], yz[0]);
          }
          return Status::ok_status();
        });
      });
    });
  }

 private:
  quant::IntegerConvAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_QLinearConv(const graph::Node& node, int64_t) {
  GB_ASSIGN_OR_RETURN(quant::IntegerConvAttrs a, quant::parse_integer_conv_attrs(node));
  return std::unique_ptr<Op>(new QLinearConvOp(std::move(a)));
}

}  // namespace glassbox::ops
