// Det (opset 11): determinant of each [M, M] matrix in the last two dims of x
// ([*, M, M] -> [*]); float32 or float64. LU with partial pivoting in double.
#include <vector>

#include "kernels/det.h"
#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class DetOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    const int64_t r = x->rank();
    if (r < 2 || x->shape()[r - 1] != x->shape()[r - 2])
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "X " + shape_to_string(x->shape()) + " must be [*, M, M] (square in the last two dims)");
    const int64_t n = x->shape()[r - 1];
    const Shape out(x->shape().begin(), x->shape().end() - 2);
    return dispatch_dtype<FloatTypes>(x->dtype(), "Det", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
      GB_ASSIGN_OR_RETURN(Tensor lu, ctx.allocate_scratch(DataType::kFloat64, {n, n}));
      for (int64_t b = 0; b < y->numel(); ++b)
        y->mutable_data<T>()[b] =
            static_cast<T>(kernels::determinant(x->data<T>() + b * n * n, n, lu.mutable_data<double>()));
      return Status::ok_status();
    });
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Det(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new DetOp());
}

}  // namespace glassbox::ops
