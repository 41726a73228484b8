// LayerNormalization (opset 17): normalizes over dims [axis, rank) of X;
// optional outputs Mean and InvStdDev have X's shape with those dims set to 1.
#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct LayerNormalizationAttrs {
  int64_t axis = -1;       // first normalized dim
  float epsilon = 1e-5f;   // added to the variance
  int64_t stash_type = 1;  // precision of mean/variance: 1 = float32 (the only one supported)
};

class LayerNormalizationOp final : public Op {
 public:
  explicit LayerNormalizationOp(LayerNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* scale, nn::need_input(ctx, 1, "Scale"));
    const Tensor* bias = ctx.input(2);
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *scale, "Scale"));
    if (bias) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *bias, "B"));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < r; ++d) (d < axis ? rows : cols) *= x->shape()[d];
    auto check = [&](const Tensor* t, const char* what) -> Status {
      if (t && t->numel() != cols && t->numel() != 1)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              std::string(what) + " " + shape_to_string(t->shape()) +
                                  " does not match the normalized size " + std::to_string(cols));
      return Status::ok_status();
    };
    GB_RETURN_IF_ERROR(check(scale, "Scale"));
    GB_RETURN_IF_ERROR(check(bias, "B"));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    Shape stat_shape = x->shape();
    for (int64_t d = axis; d < r; ++d) stat_shape[d] = 1;
    float* mean = nullptr;
    float* inv = nullptr;
    if (ctx.num_outputs() > 1) {
      GB_ASSIGN_OR_RETURN(Tensor* m, ctx.allocate_output(1, DataType::kFloat32, stat_shape));
      mean = m->mutable_data<float>();
    }
    if (ctx.num_outputs() > 2) {
      GB_ASSIGN_OR_RETURN(Tensor* s, ctx.allocate_output(2, DataType::kFloat32, stat_shape));
      inv = s->mutable_data<float>();
    }
    kernels::layer_norm_f32(rows, cols, x->data<float>(), scale->data<float>(), scale->numel() == 1 && cols != 1,
                            bias ? bias->data<float>() : nullptr, bias && bias->numel() == 1 && cols != 1, a_.epsilon,
                            y->mutable_data<float>(), mean, inv, &ctx.pool());
    return Status::ok_status();
  }

 private:
  LayerNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_LayerNormalization(const graph::Node& node, int64_t) {
  LayerNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", -1));
  GB_ASSIGN_OR_RETURN(a.epsilon, attr_float(node, "epsilon", 1e-5f));
  GB_ASSIGN_OR_RETURN(a.stash_type, attr_int(node, "stash_type", 1));
  if (a.stash_type != 1)
    return make_error(ErrorCode::kUnsupported, "stash_type " + std::to_string(a.stash_type) + " is not supported",
                      "", "only stash_type=1 (float32 statistics) is implemented");
  return std::unique_ptr<Op>(new LayerNormalizationOp(a));
}

}  // namespace glassbox::ops
