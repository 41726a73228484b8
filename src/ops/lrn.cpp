// LRN (float32): local response normalization across channels.
#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct LRNAttrs {
  float alpha = 1e-4f;  // scale of the squared sum
  float beta = 0.75f;   // exponent
  float bias = 1.0f;    // added before the power
  int64_t size = 0;     // channels in the window (required)
};

class LRNOp final : public Op {
 public:
  explicit LRNOp(LRNAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    if (x->rank() < 2) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "X needs rank >= 2");
    int64_t spatial = 1;
    for (int64_t d = 2; d < x->rank(); ++d) spatial *= x->shape()[d];
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    kernels::lrn_f32(x->shape()[0], x->shape()[1], spatial, x->data<float>(), a_.size, a_.alpha, a_.beta, a_.bias,
                     y->mutable_data<float>());
    return Status::ok_status();
  }

 private:
  LRNAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_LRN(const graph::Node& node, int64_t) {
  LRNAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", 1e-4f));
  GB_ASSIGN_OR_RETURN(a.beta, attr_float(node, "beta", 0.75f));
  GB_ASSIGN_OR_RETURN(a.bias, attr_float(node, "bias", 1.0f));
  GB_ASSIGN_OR_RETURN(a.size, attr_int_required(node, "size"));
  if (a.size < 1) return make_error(ErrorCode::kInvalidModel, "size must be >= 1");
  return std::unique_ptr<Op>(new LRNOp(a));
}

}  // namespace glassbox::ops
