// glassbox::MatMulIntegerToFloat (internal, made by the quantized_matmul_fusion pass):
//   Y = float((A - a_zero_point) x (B - b_zero_point)) * (a_scale * b_scale) [+ bias]
//       [-> GELU] [+ residual]
// inputs: A [..., M, K] uint8 (int8 on the plain loops), B [K, N] int8 (uint8 on the
// plain loops), a_scale float32 scalar, b_scale float32 scalar or [N], a_zero_point,
// b_zero_point (optional, as MatMulInteger's), bias [N] float32 (optional), residual
// float32 of Y's shape (optional; added by matmul_epilogue_fusion, as the attribute
// activation "gelu_erf", which takes the glassbox::Gelu that followed).
// The arithmetic is that of the ONNX nodes it replaces, in their order: the int32
// product exactly, Cast to float (round to nearest even), Mul by the float product
// a_scale * b_scale[j], then Add bias, then the Gelu op's gelu_erf_f32 and the residual
// Add — so the fused output equals the unfused graph's bit for bit (tests/quant). The
// input order follows onnxruntime's contrib op of the same name (residual is ours).
#include <vector>

#include "ops/attr_util.h"
#include "ops/qmatmul.h"

namespace glassbox::ops {
namespace {

Result<const float*> float_vector(const ComputeContext& ctx, const Tensor* t, int64_t n, bool scalar_ok,
                                  const char* what) {
  if (!t) return static_cast<const float*>(nullptr);
  if (t->dtype() != DataType::kFloat32 || !(t->numel() == n || (scalar_ok && t->numel() == 1)))
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string("MatMulIntegerToFloat ") + what + " " + shape_to_string(t->shape()) +
                        " must be float32 with 1" + (scalar_ok ? " or " + std::to_string(n) : std::string()) +
                        " entries");
  return t->data<float>();
}

class MatMulIntegerToFloatOp final : public Op {
 public:
  explicit MatMulIntegerToFloatOp(kernels::GemmActivation act) : act_(act) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    GB_ASSIGN_OR_RETURN(const Tensor* a_scale, require_input(ctx, 2, "a_scale"));
    GB_ASSIGN_OR_RETURN(const Tensor* b_scale, require_input(ctx, 3, "b_scale"));
    GB_ASSIGN_OR_RETURN(Shape out_shape, qmatmul_shape(ctx, *a, *b));
    const int64_t N = out_shape.back();
    GB_ASSIGN_OR_RETURN(const float* sa, float_vector(ctx, a_scale, 1, true, "a_scale"));
    GB_ASSIGN_OR_RETURN(const float* sb, float_vector(ctx, b_scale, N, true, "b_scale"));
    GB_ASSIGN_OR_RETURN(const float* bias, float_vector(ctx, ctx.input(6), N, false, "bias"));
    std::vector<float> scale(static_cast<size_t>(N));
    for (int64_t j = 0; j < N; ++j) scale[j] = sa[0] * sb[b_scale->numel() == 1 ? 0 : j];
    const Tensor* residual = ctx.input(7);
    if (residual && (residual->dtype() != DataType::kFloat32 || residual->shape() != out_shape))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "MatMulIntegerToFloat residual " + shape_to_string(residual->shape()) +
                          " must be float32 of the output's shape " + shape_to_string(out_shape));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    QMatMulOut out;
    out.f32 = y->mutable_data<float>();
    out.scale = scale.data();
    out.bias = bias;
    out.activation = act_;
    out.residual = residual ? residual->data<float>() : nullptr;
    return qmatmul_run(ctx, *a, *b, ctx.input(4), ctx.input(5), packed_, out);
  }

 private:
  kernels::GemmActivation act_;
  PackedWeightsS8Slot packed_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_MatMulIntegerToFloat(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"activation"}));
  auto act = attr_string(node, "activation", "");
  if (!act.ok()) return std::move(act).take_error();
  if (*act != "" && *act != "gelu_erf")
    return make_error(ErrorCode::kUnsupported, "MatMulIntegerToFloat activation '" + *act + "' is not implemented");
  return std::unique_ptr<Op>(
      new MatMulIntegerToFloatOp(act->empty() ? kernels::GemmActivation::kNone : kernels::GemmActivation::kGeluErf));
}

}  // namespace glassbox::ops
