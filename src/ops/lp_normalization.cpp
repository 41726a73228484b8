// LpNormalization (float32): x / ||x||_p along `axis` (p = 1 or 2).
#include "kernels/norm.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct LpNormalizationAttrs {
  int64_t axis = -1;  // axis to normalize along
  int64_t p = 2;      // norm order: 1 or 2
};

class LpNormalizationOp final : public Op {
 public:
  explicit LpNormalizationOp(LpNormalizationAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "input"));
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, x->rank()));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape()[d];
    for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= x->shape()[d];
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    kernels::lp_norm_f32(outer, x->shape()[axis], inner, x->data<float>(), a_.p, y->mutable_data<float>());
    return Status::ok_status();
  }

 private:
  LpNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_LpNormalization(const graph::Node& node, int64_t) {
  LpNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", -1));
  GB_ASSIGN_OR_RETURN(a.p, attr_int(node, "p", 2));
  if (a.p != 1 && a.p != 2) return make_error(ErrorCode::kInvalidModel, "p must be 1 or 2");
  return std::unique_ptr<Op>(new LpNormalizationOp(a));
}

}  // namespace glassbox::ops
