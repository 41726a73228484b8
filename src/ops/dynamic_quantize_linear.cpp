// DynamicQuantizeLinear (opset 11): uint8 quantization of float32 x with a scale
// and zero point computed from x's range (always including 0):
//   y_scale = (max(0, max x) - min(0, min x)) / 255
//   y_zero_point = saturate(round_half_even(0 - min(0, min x) / y_scale))
//   y = saturate(round_half_even(x / y_scale) + y_zero_point)
// An all-zero (or empty) x has range 0, and the formula would divide by 0:
// then y_scale = 1, y_zero_point = 0, y = 0, as onnxruntime outputs
// (scripts/parity/op_cases.py dynamicquantizelinear_all_zero).
#include <algorithm>
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
    // Chunks on the pool (vectorized min/max, then vectorized quantization); the
    // result does not depend on the chunking (min/max are exact, elements independent).
    // One chunk per pool thread (at least 16384 elements, a multiple of 64): 2 threads on a
    // 128 x 768 activation split it 50/50 rather than 64K/32K.
    const int64_t chunks = std::clamp<int64_t>(n / 16384, 1, ctx.pool().size());
    const int64_t chunk = ((n + chunks - 1) / chunks + 63) / 64 * 64;
    // The rounding to 64 may leave the last chunk empty.
    auto at = [&](int64_t c) { return std::min(c * chunk, n); };
    auto len = [&](int64_t c) { return std::min(chunk, n - at(c)); };
    std::vector<float> los(static_cast<size_t>(chunks), 0.f), his(static_cast<size_t>(chunks), 0.f);
    ctx.pool().parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        kernels::minmax_f32(px + at(c), len(c), &los[c], &his[c]);
    });
    const float lo = *std::min_element(los.begin(), los.end()), hi = *std::max_element(his.begin(), his.end());
    float scale = 1.f;
    int32_t zp = 0;
    kernels::dynamic_u8_params(lo, hi, &scale, &zp);
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kUInt8, x->shape()));
    uint8_t* py = y->mutable_data<uint8_t>();
    ctx.pool().parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        kernels::quantize_f32_u8(px + at(c), len(c), scale, zp, py + at(c));
    });
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
