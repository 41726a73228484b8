// ScatterElements (opset 11; reduction add/mul from 16): out = data with
// out[indices[i][j]][j] = updates[i][j] (axis 0). Indices in [-n, n-1]; others
// are errors naming the index. Duplicate indices without a reduction: last wins.
#include <cstring>

#include "kernels/gather_scatter.h"
#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

enum class Reduction { kNone, kAdd, kMul };

struct ScatterElementsAttrs {
  int64_t axis = 0;                       // axis of data the indices select along
  Reduction reduction = Reduction::kNone;  // "none" | "add" | "mul" (opset 16)
};

class ScatterElementsOp final : public Op {
 public:
  explicit ScatterElementsOp(ScatterElementsAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 1, "indices"));
    GB_ASSIGN_OR_RETURN(const Tensor* up, nn::need_input(ctx, 2, "updates"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    if (it->shape() != up->shape() || up->dtype() != x->dtype() || it->rank() != r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "indices " + shape_to_string(it->shape()) + " and updates " + shape_to_string(up->shape()) +
                                " must have one shape, the rank of data and (updates) its dtype");
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && it->shape()[d] > x->shape()[d])
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "indices exceed data outside the axis");
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, nn::read_ints(ctx, *it, "indices"));
    GB_RETURN_IF_ERROR(nn::normalize_indices(ctx, idx, x->shape()[axis], "axis " + std::to_string(axis)));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->nbytes()) std::memcpy(y->mutable_raw(), x->raw(), x->nbytes());
    if (a_.reduction == Reduction::kNone) {
      kernels::scatter_elements(dtype_size(x->dtype()), static_cast<int>(r), x->shape().data(), it->shape().data(),
                                static_cast<int>(axis), idx.data(), up->raw(), y->mutable_raw());
      return Status::ok_status();
    }
    std::vector<int64_t> offsets(idx.size());
    kernels::scatter_elements_offsets(static_cast<int>(r), x->shape().data(), it->shape().data(),
                                      static_cast<int>(axis), idx.data(), offsets.data());
    const bool add = a_.reduction == Reduction::kAdd;
    return dispatch_dtype<NumericTypes>(x->dtype(), "ScatterElements", [&]<class T>() -> Status {
      T* out = y->mutable_data<T>();
      const T* u = up->data<T>();
      for (size_t j = 0; j < offsets.size(); ++j) out[offsets[j]] = add ? T(out[offsets[j]] + u[j]) : T(out[offsets[j]] * u[j]);
      return Status::ok_status();
    });
  }

 private:
  ScatterElementsAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ScatterElements(const graph::Node& node, int64_t) {
  ScatterElementsAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 0));
  GB_ASSIGN_OR_RETURN(std::string red, attr_string(node, "reduction", "none"));
  if (red == "none") a.reduction = Reduction::kNone;
  else if (red == "add") a.reduction = Reduction::kAdd;
  else if (red == "mul") a.reduction = Reduction::kMul;
  else return make_error(ErrorCode::kUnsupported, "reduction '" + red + "' is not supported (none, add, mul)");
  return std::unique_ptr<Op>(new ScatterElementsOp(a));
}

}  // namespace glassbox::ops
