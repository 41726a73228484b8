// MaxUnpool (opset 9, output_shape input from 11): scatters X into a zero tensor
// at the flat indices I that MaxPool returned (indices over the whole output
// tensor [N, C, spatial...], as MaxPool's Indices are). The output spatial size
// is (in - 1) * stride + kernel - pad_begin - pad_end, or output_shape when given.
#include <cstring>

#include "ops/conv_attrs.h"

namespace glassbox::ops {
namespace {

struct MaxUnpoolAttrs {
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> pads;          // [begin..., end...]; empty = 0
  std::vector<int64_t> strides;       // empty = 1 per spatial dim
};

class MaxUnpoolOp final : public Op {
 public:
  explicit MaxUnpoolOp(MaxUnpoolAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* ind, nn::need_input(ctx, 1, "I"));
    const Tensor* out_shape_t = ctx.input(2);
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t sp = x->rank() - 2;
    if (sp < 1 || static_cast<int64_t>(a_.kernel_shape.size()) != sp)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "X " + shape_to_string(x->shape()) + " does not match kernel_shape of " +
                                std::to_string(a_.kernel_shape.size()) + " spatial dims");
    if ((!a_.strides.empty() && static_cast<int64_t>(a_.strides.size()) != sp) ||
        (!a_.pads.empty() && static_cast<int64_t>(a_.pads.size()) != 2 * sp))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "strides/pads do not match the spatial rank");
    if (ind->dtype() != DataType::kInt64 || ind->shape() != x->shape())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("I must be int64 with X's shape, got ") + dtype_name(ind->dtype()) +
                                shape_to_string(ind->shape()));
    Shape out{x->shape()[0], x->shape()[1]};
    if (out_shape_t) {
      GB_ASSIGN_OR_RETURN(out, nn::read_ints(ctx, *out_shape_t, "output_shape"));
      if (static_cast<int64_t>(out.size()) != x->rank() || out[0] != x->shape()[0] || out[1] != x->shape()[1])
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "output_shape " + shape_to_string(out) + " must keep X's N and C " +
                                  shape_to_string(x->shape()));
    } else {
      for (int64_t i = 0; i < sp; ++i) {
        const int64_t s = a_.strides.empty() ? 1 : a_.strides[i];
        const int64_t pads = a_.pads.empty() ? 0 : a_.pads[i] + a_.pads[i + sp];
        const int64_t d = (x->shape()[i + 2] - 1) * s + a_.kernel_shape[i] - pads;
        if (d < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "pads exceed the unpooled size");
        out.push_back(d);
      }
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
    if (y->nbytes()) std::memset(y->mutable_raw(), 0, y->nbytes());
    const size_t es = dtype_size(x->dtype());
    const int64_t* idx = ind->data<int64_t>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      if (idx[i] < 0 || idx[i] >= y->numel())
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "index " + std::to_string(idx[i]) + " (I element " + std::to_string(i) +
                                  ") is outside the output's " + std::to_string(y->numel()) + " elements");
      std::memcpy(static_cast<char*>(y->mutable_raw()) + static_cast<size_t>(idx[i]) * es,
                  static_cast<const char*>(x->raw()) + static_cast<size_t>(i) * es, es);
    }
    return Status::ok_status();
  }

 private:
  MaxUnpoolAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_MaxUnpool(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"kernel_shape", "pads", "strides"}));
  MaxUnpoolAttrs a;
  GB_ASSIGN_OR_RETURN(auto ks, attr_ints(node, "kernel_shape"));
  if (!ks) return make_error(ErrorCode::kInvalidModel, "required attribute 'kernel_shape' is missing");
  a.kernel_shape = *ks;
  GB_ASSIGN_OR_RETURN(a.pads, nn::attr_ints_or(node, "pads"));
  GB_ASSIGN_OR_RETURN(a.strides, nn::attr_ints_or(node, "strides"));
  for (int64_t v : a.kernel_shape)
    if (v < 1) return make_error(ErrorCode::kInvalidModel, "kernel_shape must be >= 1");
  for (int64_t v : a.strides)
    if (v < 1) return make_error(ErrorCode::kInvalidModel, "strides must be >= 1");
  for (int64_t v : a.pads)
    if (v < 0) return make_error(ErrorCode::kInvalidModel, "pads must be >= 0");
  return std::unique_ptr<Op>(new MaxUnpoolOp(std::move(a)));
}

}  // namespace glassbox::ops
