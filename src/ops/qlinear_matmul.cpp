// QLinearMatMul (opset 10): quantized matmul.
// real_a = (a - a_zero_point) * a_scale, likewise b; y = saturate(round(real_a @ real_b / y_scale) + y_zero_point)
// with round half to even. Scalar (per-tensor) scales/zero points only; 2-D or
// batched with equal batch dims or a 2-D b. int32 accumulation, then one
// float rescale per output (as the reference does in float).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

class QLinearMatMulOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    const char* names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      GB_ASSIGN_OR_RETURN(in[i], require_input(ctx, i, names[i]));
      if (i != 0 && i != 3 && in[i]->numel() != 1)
        return op_error(ctx, ErrorCode::kUnsupported,
                        std::string(names[i]) + ": only per-tensor (scalar) quantization is implemented");
    }
    for (size_t i : {1, 4, 6})
      if (in[i]->dtype() != DataType::kFloat32)
        return op_error(ctx, ErrorCode::kInvalidArgument, std::string(names[i]) + " must be float32");
    const Tensor* a = in[0];
    const Tensor* b = in[3];
    if (a->rank() < 2 || b->rank() < 2)
      return op_error(ctx, ErrorCode::kUnsupported, "QLinearMatMul: 1-D operands are not implemented");
    const int64_t M = a->shape()[a->rank() - 2], K = a->shape().back(), N = b->shape().back();
    if (b->shape()[b->rank() - 2] != K)
      return op_error(ctx, ErrorCode::kInvalidArgument, "inner dimensions differ: " + shape_to_string(a->shape()) +
                                                            " x " + shape_to_string(b->shape()));
    const bool b_shared = b->rank() == 2;
    if (!b_shared && !std::equal(a->shape().begin(), a->shape().end() - 2, b->shape().begin(), b->shape().end() - 2))
      return op_error(ctx, ErrorCode::kUnsupported, "QLinearMatMul: batch broadcasting is not implemented");
    int64_t nba = 1;
    for (int64_t d = 0; d + 2 < a->rank(); ++d) nba *= a->shape()[d];
    Shape out_shape(a->shape().begin(), a->shape().end() - 1);
    out_shape.push_back(N);
    using Types = TypeList<uint8_t, int8_t>;
    return dispatch_dtype<Types>(a->dtype(), "QLinearMatMul a", [&]<class TA>() -> Status {
      return dispatch_dtype<Types>(b->dtype(), "QLinearMatMul b", [&]<class TB>() -> Status {
        return dispatch_dtype<Types>(in[7]->dtype(), "QLinearMatMul y", [&]<class TY>() -> Status {
          if (in[2]->dtype() != a->dtype() || in[5]->dtype() != b->dtype())
            return op_error(ctx, ErrorCode::kInvalidArgument, "zero points must have their matrix's dtype");
          const int32_t za = in[2]->data<TA>()[0], zb = in[5]->data<TB>()[0], zy = in[7]->data<TY>()[0];
          const float scale = in[1]->data<float>()[0] * in[4]->data<float>()[0] / in[6]->data<float>()[0];
          GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, in[7]->dtype(), out_shape));
          const TA* pa = a->data<TA>();
          const TB* pb = b->data<TB>();
          TY* py = y->mutable_data<TY>();
          for (int64_t r = 0; r < nba * M; ++r) {
            const TB* bm = pb + (b_shared ? 0 : (r / M) * K * N);
            for (int64_t j = 0; j < N; ++j) {
              int32_t acc = 0;
              for (int64_t k = 0; k < K; ++k)
                acc += (static_cast<int32_t>(pa[r * K + k]) - za) * (static_cast<int32_t>(bm[k * N + j]) - zb);
              const float q = std::nearbyint(static_cast<float>(acc) * scale) + static_cast<float>(zy);
              py[r * N + j] = static_cast<TY>(std::clamp<float>(q, std::numeric_limits<TY>::lowest(),
                                                                std::numeric_limits<TY>::max()));
            }
          }
          return {};
        });
      });
    });
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_QLinearMatMul(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new QLinearMatMulOp());
}

}  // namespace glassbox::ops
