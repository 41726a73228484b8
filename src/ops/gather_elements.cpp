// GatherElements (opset 11): out[i][j][k] = data[indices[i][j][k]][j][k] (for
// axis 0). Indices in [-n, n-1]; others are errors naming the index.
#include "kernels/gather_scatter.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct GatherElementsAttrs {
  int64_t axis = 0;  // axis of data the indices select along
};

class GatherElementsOp final : public Op {
 public:
  explicit GatherElementsOp(GatherElementsAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 1, "indices"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    if (it->rank() != r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "indices " + shape_to_string(it->shape()) +
                                                                  " must have the rank of data " + shape_to_string(x->shape()));
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && it->shape()[d] > x->shape()[d])
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "indices " + shape_to_string(it->shape()) + " exceed data " + shape_to_string(x->shape()) +
                                  " outside the axis");
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, nn::read_ints(ctx, *it, "indices"));
    GB_RETURN_IF_ERROR(nn::normalize_indices(ctx, idx, x->shape()[axis], "axis " + std::to_string(axis)));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), it->shape()));
    kernels::gather_elements(dtype_size(x->dtype()), static_cast<int>(r), x->shape().data(), it->shape().data(),
                             static_cast<int>(axis), x->raw(), idx.data(), y->mutable_raw());
    return Status::ok_status();
  }

 private:
  GatherElementsAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_GatherElements(const graph::Node& node, int64_t) {
  GatherElementsAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 0));
  return std::unique_ptr<Op>(new GatherElementsOp(a));
}

}  // namespace glassbox::ops
