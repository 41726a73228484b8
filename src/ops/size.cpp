// Size: number of elements of the input as an int64 scalar.
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class SizeOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kInt64, {}));
    *y->mutable_data<int64_t>() = x->numel();
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Size(const graph::Node&, int64_t) { return std::unique_ptr<Op>(new SizeOp()); }

}  // namespace glassbox::ops
