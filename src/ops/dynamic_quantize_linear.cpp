// DynamicQuantizeLinear (opset 11): uint8 quantization of float32 x with a scale
// and zero point computed from x's range (always including 0):
//   y_scale = (max(0, max x) - min(0, min x)) / 255
//   y_zero_point = saturate(round_half_even(0 - min(0, min x) / y_scale))
//   y = saturate(round_half_even(x / y_scale) + y_zero_point)
// An all-zero (or empty) x has range 0, and the formula would divide by 0:
// then y_scale = 1, y_zero_point = 0, y = 0, as onnxruntime outputs
// (scripts/parity/op_cases.py dynamicquantizelinear_all_zero). With a NaN in x the range is taken in
// ONNX Runtime's vector order (kernels::minmax_f32_onnxruntime_order), as ORT's scale depends on it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/quant_common.h"

namespace glassbox::ops {
namespace {

class DynamicQuantizeLinearOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "x"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "x"));
    const float* px = x->data<float>();
    const int64_t n = x->numel();
    // Vectorized min/max, then vectorized quantization, in chunks on the pool (the result does
    // not depend on the chunking).
    float lo = 0.f, hi = 0.f, scale = 1.f;
    int32_t zp = 0;
    kernels::minmax_f32_parallel(px, n, &lo, &hi, &ctx.pool());
    if (kernels::any_nan_f32(px, n)) {
      // With a NaN the range is ONNX Runtime's (docs/kernels.md): its vector order can leave finite
      // elements out, and a NaN that survives it makes the scale NaN (then ORT's zero point is 255).
      kernels::minmax_f32_onnxruntime_order(px, n, &lo, &hi);
    }
    if (std::isnan(lo) || std::isnan(hi)) {
      scale = std::numeric_limits<float>::quiet_NaN();
      zp = 255;
    } else {
      kernels::dynamic_u8_params(lo, hi, &scale, &zp);
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kUInt8, x->shape()));
    kernels::quantize_f32_u8_parallel(px, n, scale, zp, y->mutable_data<uint8_t>(), &ctx.pool());
    if (ctx.num_outputs() > 1) {
      GB_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(1, DataType::kFloat32, {}));
      s->mutable_data<float>()[0] = scale;
    }
    if (ctx.num_outputs() > 2) {
      GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(2, DataType::kUInt8, {}));
      z->mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    }
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_DynamicQuantizeLinear(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new DynamicQuantizeLinearOp());
}

}  // namespace glassbox::ops
