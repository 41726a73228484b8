// SoftmaxCrossEntropyLoss (opset 12+): log_prob = LogSoftmax(scores) over the
// class dim (1), loss = NegativeLogLikelihoodLoss(log_prob, labels, weights).
// Output 1 (log_prob, scores' shape) is optional.
#include "ops/loss_common.h"

namespace glassbox::ops {
namespace {

class SoftmaxCrossEntropyLossOp final : public Op {
 public:
  explicit SoftmaxCrossEntropyLossOp(LossAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "scores"));
    GB_ASSIGN_OR_RETURN(const Tensor* labels, nn::need_input(ctx, 1, "labels"));
    const Tensor* weights = ctx.input(2);
    GB_ASSIGN_OR_RETURN(LossDims d, check_loss_inputs(ctx, *x, *labels, weights));
    Tensor scratch;
    Tensor* logp = &scratch;
    if (ctx.num_outputs() > 1) {
      GB_ASSIGN_OR_RETURN(logp, ctx.allocate_output(1, x->dtype(), x->shape()));
    } else {
      GB_ASSIGN_OR_RETURN(scratch, ctx.allocate_scratch(x->dtype(), x->shape()));
    }
    GB_RETURN_IF_ERROR(dispatch_dtype<FloatTypes>(x->dtype(), "SoftmaxCrossEntropyLoss", [&]<class T>() -> Status {
      kernels::log_softmax_middle(x->data<T>(), logp->mutable_data<T>(), d.N, d.C, d.D);
      return Status::ok_status();
    }));
    return nll_to_output(ctx, 0, *logp, *labels, weights, d, a_);
  }

 private:
  LossAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_SoftmaxCrossEntropyLoss(const graph::Node& node, int64_t) {
  GB_ASSIGN_OR_RETURN(LossAttrs a, parse_loss_attrs(node));
  return std::unique_ptr<Op>(new SoftmaxCrossEntropyLossOp(a));
}

}  // namespace glassbox::ops
