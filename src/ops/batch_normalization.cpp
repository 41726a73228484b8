// BatchNormalization, inference form (float32): y = (x - mean) / sqrt(var + eps) * scale + B
// per channel (dim 1). training_mode=1 (opset 14) and spatial=0 (opsets < 9) are refused.
#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct BatchNormalizationAttrs {
  float epsilon = 1e-5f;  // added to the variance
  // momentum is only used in training mode and is ignored here.
};

class BatchNormalizationOp final : public Op {
 public:
  explicit BatchNormalizationOp(BatchNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
    const Tensor* in[5] = {x};
    for (size_t i = 1; i < 5; ++i) {
      GB_ASSIGN_OR_RETURN(in[i], nn::need_input(ctx, i, names[i]));
    }
    for (size_t i = 0; i < 5; ++i) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *in[i], names[i]));
    if (x->rank() < 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "X " + shape_to_string(x->shape()) + " needs rank >= 2");
    const int64_t n = x->shape()[0], c = x->shape()[1];
    for (size_t i = 1; i < 5; ++i)
      if (in[i]->numel() != c)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              std::string(names[i]) + " " + shape_to_string(in[i]->shape()) + " must have C = " +
                                  std::to_string(c) + " elements");
    int64_t spatial = 1;
    for (int64_t d = 2; d < x->rank(); ++d) spatial *= x->shape()[d];
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    kernels::batch_norm_f32(n, c, spatial, x->data<float>(), in[1]->data<float>(), in[2]->data<float>(),
                            in[3]->data<float>(), in[4]->data<float>(), a_.epsilon, y->mutable_data<float>(),
                            &ctx.pool());
    return Status::ok_status();
  }

 private:
  BatchNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_BatchNormalization(const graph::Node& node, int64_t opset) {
  BatchNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-5f));
  GB_ASSIGN_OR_RETURN(int64_t training_mode, attr_int(node, "training_mode", 0));
  if (training_mode != 0)
    return make_error(ErrorCode::kUnsupported, "training_mode=1 is not supported", "", "export the model in eval mode");
  if (opset < 9) {
    GB_ASSIGN_OR_RETURN(int64_t spatial, attr_int(node, "spatial", 1));
    if (spatial != 1) return make_error(ErrorCode::kUnsupported, "spatial=0 is not supported");
  }
  if (node.outputs.size() > 1) {
    for (size_t i = 1; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty())
        return make_error(ErrorCode::kUnsupported, "training outputs (running mean/var, saved stats) are not supported",
                          "", "export the model in eval mode");
  }
  return std::unique_ptr<Op>(new BatchNormalizationOp(a));
}

}  // namespace glassbox::ops
