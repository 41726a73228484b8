// glassbox::FusedMatMul (internal, made by the matmul_epilogue_fusion pass):
//   Y = act(A x W + bias) [+ residual]
// inputs: A [..., K] float32, W [K, N] float32, bias [N], residual (optional, Y's shape);
// attribute activation: "" (none) or "gelu_erf". With packed weights (kernel variant
// packed_weights) the whole epilogue runs inside the GEMM tiles; otherwise a plain
// GEMM, then one pass over Y. A residual that only broadcasts to Y is added separately.
// SessionOptions::precision bf16 / int8-dynamic: the packed weights are bfloat16 / int8 per
// output column (epilogue still fp32; kernels/gemm_int8.h for the int8 arithmetic).
#include "kernels/gemm.h"
#include "kernels/layer_norm.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"
#include "ops/packed_weights.h"

namespace glassbox::ops {
namespace {

class FusedMatMulOp final : public Op {
 public:
  explicit FusedMatMulOp(kernels::GemmActivation act) : act_(act) {}
  std::string precision_decision(Precision precision, const std::vector<const Tensor*>& constants) const override {
    return constants.size() < 2 ? std::string() : packed_precision_decision(precision, constants[1], false);
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* w, require_input(ctx, 1, "W"));
    GB_ASSIGN_OR_RETURN(const Tensor* bias, require_input(ctx, 2, "bias"));
    const Tensor* res = ctx.input(3);
    for (const Tensor* t : {a, w, bias, res})
      if (t && t->dtype() != DataType::kFloat32)
        return op_error(ctx, ErrorCode::kInternal, "FusedMatMul expects float32 inputs");
    if (a->rank() < 1 || w->rank() != 2 || a->shape().back() != w->shape()[0] || bias->rank() != 1 ||
        bias->shape()[0] != w->shape()[1])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "FusedMatMul shapes do not fit: A " + shape_to_string(a->shape()) + ", W " +
                          shape_to_string(w->shape()) + ", bias " + shape_to_string(bias->shape()));
    const int64_t K = w->shape()[0], N = w->shape()[1];
    Shape out_shape = a->shape();
    out_shape.back() = N;
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    const int64_t M = K ? a->numel() / K : 0;
    if (M == 0 || N == 0) return {};
    kernels::GemmEpilogue ep;
    ep.bias = bias->data<float>();
    ep.activation = act_;
    const bool fuse_residual = res && res->shape() == out_shape;
    if (fuse_residual) {
      ep.residual = res->data<float>();
      ep.ld_residual = N;
    }
    float* py = y->mutable_data<float>();
    ThreadPool& pool = ctx.pool();
    if (ctx.input_is_constant(1) && K > 0) {
      kernels::gemm_f32_packed(M, a->data<float>(), K, *packed_.get(*w, false, pool, ctx.precision()), py, N, ep,
                               &pool);
    } else {
      kernels::GemmDesc d;
      d.M = M; d.N = N; d.K = K; d.lda = K; d.ldb = N; d.ldc = N;
      kernels::gemm_f32(d, a->data<float>(), w->data<float>(), py, &pool);
      // Epilogue in one pass per row chunk; GELU through the vectorized erf.
      pool.parallel_for(M, std::max<int64_t>(1, 16384 / N), [&](int64_t r0, int64_t r1) {
        float* p = py + r0 * N;
        const int64_t rows = r1 - r0;
        kernels::GemmEpilogue bias_only;
        bias_only.bias = ep.bias;
        kernels::apply_gemm_epilogue(rows, N, p, N, bias_only);
        if (ep.activation == kernels::GemmActivation::kGeluErf) kernels::gelu_erf_f32(p, p, rows * N, nullptr);
        if (ep.residual) {
          const float* r = ep.residual + r0 * N;
          for (int64_t i = 0; i < rows * N; ++i) p[i] += r[i];
        }
      });
    }
    if (res && !fuse_residual) {
      GB_ASSIGN_OR_RETURN(Shape bs, broadcast_shapes(out_shape, res->shape()));
      if (bs != out_shape)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "residual " + shape_to_string(res->shape()) + " does not broadcast to " + shape_to_string(out_shape));
      parallel_binary<float, float, float>(pool, *y, *res, *y, [](float v, float r) { return v + r; });
    }
    return {};
  }

 private:
  kernels::GemmActivation act_;
  PackedWeightsSlot packed_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_FusedMatMul(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"activation"}));
  auto act_attr = attr_string(node, "activation", "");
  if (!act_attr.ok()) return std::move(act_attr).take_error();
  const std::string act = *act_attr;
  if (act != "" && act != "gelu_erf")
    return make_error(ErrorCode::kUnsupported, "FusedMatMul activation '" + act + "' is not implemented");
  return std::unique_ptr<Op>(new FusedMatMulOp(act.empty() ? kernels::GemmActivation::kNone : kernels::GemmActivation::kGeluErf));
}

}  // namespace glassbox::ops
