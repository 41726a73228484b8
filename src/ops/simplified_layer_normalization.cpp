// SimplifiedLayerNormalization: ONNX Runtime's RMSNorm, registered by ORT in the default (ai.onnx)
// domain although ONNX defines no such op (graph/ort_onnx_domain_ops.inc holds the loader's declared
// checker exemption). onnxruntime-genai's builder writes it for a norm without a residual input.
// Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale, the mean of squares in double as
// ORT's CPU kernel (kernels/rms_norm.h). Inputs X, scale (the normalized dims' element count);
// outputs Y and optional inv_std_var (X's shape with the normalized dims set to 1).
// stash_type other than 1 (float) is refused by name.
#include "kernels/rms_norm.h"
#include "ops/attr_util.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct SimplifiedLayerNormalizationAttrs {
  int64_t axis = -1;       // first normalized dim (ORT's schema default)
  float epsilon = 1e-5f;   // added to the mean of squares (ORT's schema default)
};

class SimplifiedLayerNormalizationOp final : public Op {
 public:
  explicit SimplifiedLayerNormalizationOp(SimplifiedLayerNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* scale, nn::need_input(ctx, 1, "scale"));
    for (const Tensor* t : {x, scale}) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *t, "X/scale"));
    const int64_t rank = static_cast<int64_t>(x->rank());
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, rank));
    int64_t cols = 1;
    for (int64_t i = axis; i < rank; ++i) cols *= x->shape()[i];
    if (scale->numel() != cols)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "scale has " + std::to_string(scale->numel()) + " values; the normalized dims of X " +
                                shape_to_string(x->shape()) + " from axis " + std::to_string(axis) + " hold " + std::to_string(cols));
    const int64_t rows = cols > 0 ? x->numel() / cols : 0;
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    float* inv = nullptr;
    if (ctx.num_outputs() > 1) {
      Shape stat = x->shape();
      for (int64_t i = axis; i < rank; ++i) stat[i] = 1;
      GB_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(1, DataType::kFloat32, stat));
      inv = s->mutable_data<float>();
    }
    kernels::rms_norm_rows_f32(rows, cols, x->data<float>(), scale->data<float>(), a_.epsilon, y->mutable_data<float>(), inv,
                               &ctx.pool());
    return Status::ok_status();
  }

 private:
  SimplifiedLayerNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ort_SimplifiedLayerNormalization(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "epsilon", "stash_type"}));
  SimplifiedLayerNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", -1));
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-5f));
  GB_ASSIGN_OR_RETURN(int64_t stash, attr_int(node, "stash_type", 1));
  if (stash != 1) return unsupported_attr("stash_type", std::to_string(stash) + "; only 1 (float statistics) is implemented");
  if (node.outputs.size() > 2) return make_error(ErrorCode::kInvalidModel, "SimplifiedLayerNormalization has at most 2 outputs");
  return std::unique_ptr<Op>(new SimplifiedLayerNormalizationOp(a));
}

}  // namespace glassbox::ops
