// Dropout (inference): output aliases the input; the optional mask is all true
// (bool from opset 10, input dtype filled with 1 before). training_mode=true
// (opset 12 input) with a nonzero ratio is refused: glassbox does not train.
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class DropoutOp final : public Op {
 public:
  explicit DropoutOp(int64_t opset) : opset_(opset) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    if (opset_ >= 12 && ctx.input(2)) {
      const Tensor* tm = ctx.input(2);
      if (tm->dtype() == DataType::kBool && tm->numel() == 1 && *tm->data<uint8_t>() != 0) {
        bool zero_ratio = false;
        if (const Tensor* ratio = ctx.input(1); ratio && ratio->dtype() == DataType::kFloat32 && ratio->numel() == 1)
          zero_ratio = *ratio->data<float>() == 0.f;
        if (!zero_ratio)
          return nn::node_error(ctx, ErrorCode::kUnsupported, "training_mode=true is not supported",
                                "export the model in eval mode");
      }
    }
    GB_RETURN_IF_ERROR(ctx.alias_output(0, *x));
    if (ctx.num_outputs() > 1) {
      if (opset_ >= 10) {
        GB_ASSIGN_OR_RETURN(Tensor* m, ctx.allocate_output(1, DataType::kBool, x->shape()));
        const uint8_t one = 1;
        kernels::fill_elements(1, &one, m->numel(), m->mutable_raw());
      } else {
        GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "data"));
        GB_ASSIGN_OR_RETURN(Tensor* m, ctx.allocate_output(1, x->dtype(), x->shape()));
        const float one = 1.f;
        kernels::fill_elements(4, &one, m->numel(), m->mutable_raw());
      }
    }
    return Status::ok_status();
  }

 private:
  int64_t opset_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Dropout(const graph::Node& node, int64_t opset) {
  if (opset < 7) {
    GB_ASSIGN_OR_RETURN(int64_t is_test, attr_int(node, "is_test", 0));
    (void)is_test;  // inference either way
  }
  return std::unique_ptr<Op>(new DropoutOp(opset));
}

}  // namespace glassbox::ops
