// Gemm: Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to
// [M, N] (optional since opset 11). float32 via kernels/gemm.h (oneDNN); the
// alpha/beta/C epilogue is one extra pass over Y. Gemm-6: attribute `broadcast`
// (default 0) — without it C must already have Y's shape [M, N].
// SessionOptions::precision bf16 / int8-dynamic with constant B (a linear layer): B packed
// once as bfloat16 / per-column int8 (kernel variant packed_weights), A converted (bf16) or
// quantized per row (u8) per call, fp32 / s32 accumulation; the alpha/beta/C epilogue stays
// fp32. fp32 runs the plain path below unchanged.
#include <array>

#include "kernels/gemm.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"
#include "ops/packed_weights.h"

namespace glassbox::ops {
namespace {

struct GemmAttrs {
  float alpha = 1.0f;   // scale of A * B
  float beta = 1.0f;    // scale of C
  int64_t transA = 0;   // A is [K, M]
  int64_t transB = 0;   // B is [N, K]
  bool c_exact = false;  // Gemm-6 with broadcast = 0: C must be [M, N]
};

class GemmOp final : public Op {
 public:
  explicit GemmOp(GemmAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    const Tensor* c = ctx.input(2);
    if (c && !c->defined()) c = nullptr;
    for (const Tensor* t : {a, b, c})
      if (t && t->dtype() != DataType::kFloat32)
        return op_error(ctx, ErrorCode::kUnsupported,
                        std::string("Gemm supports float32 only, got ") + dtype_name(t->dtype()),
                        "cast the inputs to float32");
    if (a->rank() != 2 || b->rank() != 2)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "Gemm needs 2-D A and B, got " + shape_to_string(a->shape()) + " and " +
                          shape_to_string(b->shape()));
    const int64_t M = a_.transA ? a->shape()[1] : a->shape()[0];
    const int64_t K = a_.transA ? a->shape()[0] : a->shape()[1];
    const int64_t Kb = a_.transB ? b->shape()[1] : b->shape()[0];
    const int64_t N = a_.transB ? b->shape()[0] : b->shape()[1];
    if (K != Kb)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "Gemm inner dimensions differ: A " + shape_to_string(a->shape()) + " x B " +
                          shape_to_string(b->shape()) + " (transA=" + std::to_string(a_.transA) +
                          ", transB=" + std::to_string(a_.transB) + ")");
    const Shape out_shape{M, N};
    if (c && a_.c_exact && c->shape() != out_shape)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "C shape " + shape_to_string(c->shape()) + " differs from " + shape_to_string(out_shape) +
                          " and Gemm-6 attribute broadcast is 0");
    if (c) {
      GB_ASSIGN_OR_RETURN(Shape bs, broadcast_shapes(c->shape(), out_shape));
      if (bs != out_shape)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "C shape " + shape_to_string(c->shape()) + " does not broadcast to " +
                            shape_to_string(out_shape));
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    kernels::GemmDesc d;
    d.M = M;
    d.N = N;
    d.K = K;
    d.trans_a = a_.transA != 0;
    d.trans_b = a_.transB != 0;
    d.lda = a->shape()[1];
    d.ldb = b->shape()[1];
    d.ldc = N;
    if (ctx.precision() != Precision::kFp32 && ctx.input_is_constant(1) && !d.trans_a && K > 0) {
      auto packed = packed_.get(*b, d.trans_b, ctx.pool(), ctx.precision());
      kernels::gemm_f32_packed(M, a->data<float>(), d.lda, *packed, y->mutable_data<float>(), N, {}, &ctx.pool());
    } else {
      kernels::gemm_f32(d, a->data<float>(), b->data<float>(), y->mutable_data<float>(), &ctx.pool());
    }
    const float alpha = a_.alpha, beta = a_.beta;
    if (c && beta != 0.f) {
      parallel_binary<float, float, float>(ctx.pool(), *y, *c, *y,
                                           [alpha, beta](float v, float cv) { return alpha * v + beta * cv; });
    } else if (alpha != 1.f) {
      float* p = y->mutable_data<float>();
      parallel_unary(ctx.pool(), p, p, y->numel(), [alpha](float v) { return alpha * v; });
    }
    return {};
  }
  std::string precision_decision(Precision precision, const std::vector<const Tensor*>& constants) const override {
    if (a_.transA || constants.size() < 2) return {};  // a transposed A is never packed
    return packed_precision_decision(precision, constants[1], a_.transB != 0);
  }

 private:
  GemmAttrs a_;
  PackedWeightsSlot packed_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Gemm(const graph::Node& node, int64_t opset) {
  if (opset < 7) GB_RETURN_IF_ERROR(check_known_attrs(node, {"alpha", "beta", "transA", "transB", "broadcast"}));
  else GB_RETURN_IF_ERROR(check_known_attrs(node, {"alpha", "beta", "transA", "transB"}));
  GemmAttrs a;
  if (opset < 7) {
    GB_ASSIGN_OR_RETURN(int64_t broadcast, attr_int(node, "broadcast", 0));
    a.c_exact = broadcast == 0;
  }
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  GB_ASSIGN_OR_RETURN(a.beta, attr_float(node, "beta", a.beta));
  GB_ASSIGN_OR_RETURN(a.transA, attr_int(node, "transA", a.transA));
  GB_ASSIGN_OR_RETURN(a.transB, attr_int(node, "transB", a.transB));
  return std::unique_ptr<Op>(new GemmOp(a));
}

}  // namespace glassbox::ops
