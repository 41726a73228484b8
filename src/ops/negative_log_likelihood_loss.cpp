// NegativeLogLikelihoodLoss (opset 12+): loss = -weight[t] * input[n, t, d1..dk]
// for target t, reduced by `reduction`; see ops/loss_common.h for shapes.
#include "ops/loss_common.h"

namespace glassbox::ops {
namespace {

class NegativeLogLikelihoodLossOp final : public Op {
 public:
  explicit NegativeLogLikelihoodLossOp(LossAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* target, nn::need_input(ctx, 1, "target"));
    const Tensor* weight = ctx.input(2);
    GB_ASSIGN_OR_RETURN(LossDims d, check_loss_inputs(ctx, *x, *target, weight));
    return nll_to_output(ctx, 0, *x, *target, weight, d, a_);
  }

 private:
  LossAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_NegativeLogLikelihoodLoss(const graph::Node& node, int64_t) {
  GB_ASSIGN_OR_RETURN(LossAttrs a, parse_loss_attrs(node));
  return std::unique_ptr<Op>(new NegativeLogLikelihoodLossOp(a));
}

}  // namespace glassbox::ops
