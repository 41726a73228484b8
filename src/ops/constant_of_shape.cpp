// ConstantOfShape: a tensor of the given shape filled with `value`
// (a one-element tensor; default float32 0). The memory cap stops shape bombs.
#include <cstring>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

class ConstantOfShapeOp final : public Op {
 public:
  explicit ConstantOfShapeOp(Tensor value) : value_(std::move(value)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* s, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> shape, nn::read_ints(ctx, *s, "input"));
    for (int64_t d : shape)
      if (d < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "shape " + shape_to_string(shape) + " has a negative dim");
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, value_.dtype(), shape));
    kernels::fill_elements(dtype_size(value_.dtype()), value_.raw(), y->numel(), y->mutable_raw());
    return Status::ok_status();
  }

 private:
  Tensor value_;  // one element
};

}  // namespace

Result<std::unique_ptr<Op>> create_ConstantOfShape(const graph::Node& node, int64_t) {
  Tensor value;
  if (const graph::Attribute* a = node.attr("value")) {
    if (a->type != graph::AttrType::kTensor || a->t.numel() != 1)
      return make_error(ErrorCode::kInvalidModel, "attribute 'value' must be a one-element tensor");
    if (dtype_size(a->t.dtype()) == 0)
      return make_error(ErrorCode::kUnsupported, std::string("dtype ") + dtype_name(a->t.dtype()) + " is not supported");
    value = a->t;
  } else {
    GB_ASSIGN_OR_RETURN(value, Tensor::allocate(DataType::kFloat32, {1}));
  }
  return std::unique_ptr<Op>(new ConstantOfShapeOp(std::move(value)));
}

}  // namespace glassbox::ops
