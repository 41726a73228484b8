// Concat: joins inputs along `axis` (all other dims equal, same dtype).
#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct ConcatAttrs {
  int64_t axis = 1;  // required from opset 4 (opset 1 default 1); negative from opset 11
};

class ConcatOp final : public Op {
 public:
  explicit ConcatOp(ConcatAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x0, nn::need_input(ctx, 0, "inputs[0]"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x0));
    const int64_t r = x0->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    Shape out = x0->shape();
    out[axis] = 0;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* xi, nn::need_input(ctx, i, "inputs"));
      bool same = xi->rank() == r && xi->dtype() == x0->dtype();
      for (int64_t d = 0; same && d < r; ++d) same = d == axis || xi->shape()[d] == x0->shape()[d];
      if (!same)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "input " + std::to_string(i) + " " + dtype_name(xi->dtype()) +
                                  shape_to_string(xi->shape()) + " does not match input 0 " +
                                  dtype_name(x0->dtype()) + shape_to_string(x0->shape()) + " outside axis " +
                                  std::to_string(axis));
      out[axis] += xi->shape()[axis];
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x0->dtype(), out));
    const size_t es = dtype_size(x0->dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
    const size_t dst_pitch = static_cast<size_t>(out[axis] * inner) * es;
    size_t offset = 0;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* xi = ctx.input(i);
      const size_t row = static_cast<size_t>(xi->shape()[axis] * inner) * es;
      kernels::copy_rows(outer, row, xi->raw(), row, static_cast<char*>(y->mutable_raw()) + offset, dst_pitch,
                         &ctx.pool());
      offset += row;
    }
    return Status::ok_status();
  }

 private:
  ConcatAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Concat(const graph::Node& node, int64_t opset) {
  ConcatAttrs a;
  if (opset >= 4 && !nn::has_attr(node, "axis"))
    return make_error(ErrorCode::kInvalidModel, "attribute 'axis' is required");
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 1));
  return std::unique_ptr<Op>(new ConcatOp(a));
}

}  // namespace glassbox::ops
