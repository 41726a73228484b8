// BatchNormalization (float32): y = (x - mean) / sqrt(var + eps) * scale + B per channel (dim 1).
// Inference form: mean/var are the inputs. training_mode=1 (opset 14+): mean/var are the
// batch's own (over N and the spatial dims, population variance) and the optional outputs
// running_mean/var = input_mean/var * momentum + batch mean/var * (1 - momentum).
// spatial=0 (opsets < 9) and the opset < 14 training outputs are refused.
#include <vector>

#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct BatchNormalizationAttrs {
  float epsilon = 1e-5f;   // added to the variance
  float momentum = 0.9f;   // training mode: weight of the old running statistics
  bool training_mode = false;  // opset 14+: normalize with the batch's statistics
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
    const float* mean = in[3]->data<float>();
    const float* var = in[4]->data<float>();
    std::vector<float> batch_mean, batch_var;
    if (a_.training_mode) {
      batch_mean.assign(static_cast<size_t>(c), 0.f);
      batch_var.assign(static_cast<size_t>(c), 0.f);
      const float* px = x->data<float>();
      const double count = static_cast<double>(n * spatial);
      for (int64_t ch = 0; ch < c && count > 0; ++ch) {
        double sum = 0, sq = 0;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t k = 0; k < spatial; ++k) sum += px[(b * c + ch) * spatial + k];
        const double m = sum / count;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t k = 0; k < spatial; ++k) {
            const double d = px[(b * c + ch) * spatial + k] - m;
            sq += d * d;
          }
        batch_mean[ch] = static_cast<float>(m);
        batch_var[ch] = static_cast<float>(sq / count);
      }
      for (size_t i = 1; i < 3 && i < ctx.num_outputs(); ++i) {
        GB_ASSIGN_OR_RETURN(Tensor* run, ctx.allocate_output(i, DataType::kFloat32, {c}));
        const float* old = i == 1 ? mean : var;
        const std::vector<float>& cur = i == 1 ? batch_mean : batch_var;
        for (int64_t ch = 0; ch < c; ++ch)
          run->mutable_data<float>()[ch] = old[ch] * a_.momentum + cur[ch] * (1.f - a_.momentum);
      }
      mean = batch_mean.data();
      var = batch_var.data();
    }
    kernels::batch_norm_f32(n, c, spatial, x->data<float>(), in[1]->data<float>(), in[2]->data<float>(), mean, var,
                            a_.epsilon, y->mutable_data<float>(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  BatchNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_BatchNormalization(const graph::Node& node, int64_t opset) {
  BatchNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-5f));
  GB_ASSIGN_OR_RETURN(a.momentum, attr_float(node, "momentum", 0.9f));
  GB_ASSIGN_OR_RETURN(int64_t training_mode, attr_int(node, "training_mode", 0));
  a.training_mode = training_mode != 0;
  if (a.training_mode && opset < 14)
    return make_error(ErrorCode::kInvalidModel, "training_mode is an attribute of opset 14+", "",
                      "re-export the model at opset 14 or later");
  if (a.training_mode) return std::unique_ptr<Op>(new BatchNormalizationOp(a));  // outputs 1, 2: running mean/var
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
