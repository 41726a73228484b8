// com.microsoft SkipSimplifiedLayerNormalization (ONNX Runtime contrib op, since version 1; the
// residual + RMSNorm of onnxruntime-genai's decoders): s = input + skip (+ bias), output =
// s / sqrt(mean(s^2 over the last dim) + epsilon) * gamma. input [batch, seq, hidden] or
// [tokens, hidden]; skip input's shape (or its last two dims); gamma and bias [hidden].
// Outputs: output; mean (refused: the simplified form has none); inv_std_var [..., 1];
// input_skip_bias_sum = s (the residual stream the next layer reads).
#include <algorithm>

#include "kernels/rms_norm.h"
#include "ops/attr_util.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct SkipSimplifiedLayerNormalizationAttrs {
  float epsilon = 1e-12f;  // added to the mean of squares (ORT's schema default)
};

class SkipSimplifiedLayerNormalizationOp final : public Op {
 public:
  explicit SkipSimplifiedLayerNormalizationOp(SkipSimplifiedLayerNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* skip, nn::need_input(ctx, 1, "skip"));
    GB_ASSIGN_OR_RETURN(const Tensor* gamma, nn::need_input(ctx, 2, "gamma"));
    const Tensor* bias = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    for (const Tensor* t : {x, skip, gamma, bias})
      if (t) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *t, "an input"));
    if (x->rank() != 2 && x->rank() != 3)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "input must be 2-D or 3-D, got " + shape_to_string(x->shape()));
    const int64_t hidden = x->shape().back(), rows = x->numel() / std::max<int64_t>(hidden, 1);
    const bool skip_full = skip->shape() == x->shape();
    const int64_t skip_rows = skip_full ? rows : skip->numel() / std::max<int64_t>(hidden, 1);
    if (!skip_full && (skip->rank() < 2 || skip->shape().back() != hidden || skip_rows == 0 || rows % skip_rows != 0 ||
                       skip->shape()[skip->rank() - 2] != x->shape()[x->rank() - 2]))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "skip " + shape_to_string(skip->shape()) +
                                                                  " is neither input's shape nor its last two dims");
    if (gamma->numel() != hidden || (bias && bias->numel() != hidden))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "gamma and bias must have hidden_size = " + std::to_string(hidden) + " values");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    Shape stat_shape = x->shape();
    stat_shape.back() = 1;
    float* inv = nullptr;
    if (ctx.num_outputs() > 2) {
      GB_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(2, DataType::kFloat32, stat_shape));
      inv = s->mutable_data<float>();
    }
    Tensor* sum_out = nullptr;
    if (ctx.num_outputs() > 3) {
      GB_ASSIGN_OR_RETURN(sum_out, ctx.allocate_output(3, DataType::kFloat32, x->shape()));
    }
    Tensor scratch;
    if (!sum_out) {
      GB_ASSIGN_OR_RETURN(scratch, ctx.allocate_scratch(DataType::kFloat32, x->shape()));
    }
    float* sum = sum_out ? sum_out->mutable_data<float>() : scratch.mutable_data<float>();
    const float* px = x->data<float>();
    const float* ps = skip->data<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < hidden; ++c)
        sum[r * hidden + c] = px[r * hidden + c] + ps[(r % skip_rows) * hidden + c] + (bias ? bias->data<float>()[c] : 0.0f);
    kernels::rms_norm_rows_f32(rows, hidden, sum, gamma->data<float>(), a_.epsilon, y->mutable_data<float>(), inv, &ctx.pool());
    return Status::ok_status();
  }

 private:
  SkipSimplifiedLayerNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ms_SkipSimplifiedLayerNormalization(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"epsilon"}));
  SkipSimplifiedLayerNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-12f));
  if (node.outputs.size() > 1 && !node.outputs[1].empty())
    return make_error(ErrorCode::kUnsupported, "output 'mean' is not produced by the simplified (RMS) form", {},
                      "leave output 1 empty, as onnxruntime-genai's builder does");
  if (node.outputs.size() > 4) return make_error(ErrorCode::kInvalidModel, "SkipSimplifiedLayerNormalization has at most 4 outputs");
  return std::unique_ptr<Op>(new SkipSimplifiedLayerNormalizationOp(a));
}

}  // namespace glassbox::ops
