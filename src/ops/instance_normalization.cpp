// InstanceNormalization (float32): per (n, c) mean/variance over spatial dims.
#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct InstanceNormalizationAttrs {
  float epsilon = 1e-5f;  // added to the variance
};

class InstanceNormalizationOp final : public Op {
 public:
  explicit InstanceNormalizationOp(InstanceNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* s, nn::need_input(ctx, 1, "scale"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, nn::need_input(ctx, 2, "B"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "input"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *s, "scale"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *b, "B"));
    if (x->rank() < 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "input needs rank >= 2");
    const int64_t n = x->shape()[0], c = x->shape()[1];
    if (s->numel() != c || b->numel() != c)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "scale and B must have C = " + std::to_string(c) + " elements");
    int64_t spatial = 1;
    for (int64_t d = 2; d < x->rank(); ++d) spatial *= x->shape()[d];
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    kernels::instance_norm_f32(n, c, spatial, x->data<float>(), s->data<float>(), b->data<float>(), a_.epsilon,
                               y->mutable_data<float>(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  InstanceNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_InstanceNormalization(const graph::Node& node, int64_t) {
  InstanceNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-5f));
  return std::unique_ptr<Op>(new InstanceNormalizationOp(a));
}

}  // namespace glassbox::ops
