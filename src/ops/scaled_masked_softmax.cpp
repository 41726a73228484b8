// glassbox::ScaledMaskedSoftmax (internal, made by attention_softmax_fusion):
//   Y = Softmax(S * scale + mask) over the last axis; S float32, mask float32
// broadcasting to S (e.g. the [batch, 1, 1, keys] padding bias of a BERT export).
#include <vector>

#include "kernels/softmax.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

class ScaledMaskedSoftmaxOp final : public Op {
 public:
  explicit ScaledMaskedSoftmaxOp(float scale) : scale_(scale) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "scores"));
    GB_ASSIGN_OR_RETURN(const Tensor* mask, require_input(ctx, 1, "mask"));
    if (x->dtype() != DataType::kFloat32 || mask->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kInternal, "ScaledMaskedSoftmax expects float32");
    const Shape& s = x->shape();
    GB_ASSIGN_OR_RETURN(Shape bs, broadcast_shapes(s, mask->shape()));
    if (bs != s || s.empty())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "mask " + shape_to_string(mask->shape()) + " does not broadcast to the scores " + shape_to_string(s));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, s));
    if (x->numel() == 0) return {};
    // Mask strides over the scores' dims (0 where the mask broadcasts).
    const size_t r = s.size();
    Shape ms(r - mask->shape().size(), 1);
    ms.insert(ms.end(), mask->shape().begin(), mask->shape().end());
    std::vector<int64_t> stride(r, 0);
    int64_t acc = 1;
    for (size_t i = r; i-- > 0;) {
      stride[i] = ms[i] == 1 ? 0 : acc;
      acc *= ms[i];
    }
    const int64_t n = s.back(), rows = x->numel() / n;
    const float* px = x->data<float>();
    const float* pm = mask->data<float>();
    float* py = y->mutable_data<float>();
    const float scale = scale_;
    ctx.pool().parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        int64_t off = 0, rest = row;
        for (size_t i = r - 1; i-- > 0;) {
          off += (rest % s[i]) * stride[i];
          rest /= s[i];
        }
        kernels::scaled_masked_softmax_row_f32(px + row * n, pm + off, stride[r - 1], py + row * n, n, scale);
      }
    });
    return {};
  }

 private:
  float scale_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_ScaledMaskedSoftmax(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"scale"}));
  GB_ASSIGN_OR_RETURN(float scale, attr_float(node, "scale", 1.f));
  return std::unique_ptr<Op>(new ScaledMaskedSoftmaxOp(scale));
}

}  // namespace glassbox::ops
