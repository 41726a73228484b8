// Squeeze: removes size-1 dims (axes attribute before opset 13, input from 13;
// none given = all size-1 dims). Output aliases the input.
#include <algorithm>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct SqueezeAttrs {
  bool axes_from_input = false;  // opset >= 13
  bool has_axes = false;
  std::vector<int64_t> axes;     // opset < 13: dims to remove (negative from 11)
};

class SqueezeOp final : public Op {
 public:
  explicit SqueezeOp(SqueezeAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    std::vector<int64_t> axes = a_.axes;
    bool has_axes = a_.has_axes;
    if (a_.axes_from_input && ctx.input(1)) {
      GB_ASSIGN_OR_RETURN(axes, nn::read_ints(ctx, *ctx.input(1), "axes"));
      has_axes = true;
    }
    const int64_t r = x->rank();
    std::vector<bool> drop(static_cast<size_t>(r), false);
    if (has_axes) {
      for (int64_t ax : axes) {
        GB_ASSIGN_OR_RETURN(int64_t a, nn::norm_axis(&ctx, ax, r, "axes entry"));
        if (x->shape()[a] != 1)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                                "cannot squeeze axis " + std::to_string(ax) + " of size " +
                                    std::to_string(x->shape()[a]) + " (input " + shape_to_string(x->shape()) + ")");
        drop[a] = true;
      }
    } else {
      for (int64_t i = 0; i < r; ++i) drop[i] = x->shape()[i] == 1;
    }
    Shape out;
    for (int64_t i = 0; i < r; ++i)
      if (!drop[i]) out.push_back(x->shape()[i]);
    GB_ASSIGN_OR_RETURN(Tensor view, x->reshaped(out));
    return ctx.alias_output(0, view);
  }

 private:
  SqueezeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Squeeze(const graph::Node& node, int64_t opset) {
  SqueezeAttrs a;
  a.axes_from_input = opset >= 13;
  if (!a.axes_from_input && nn::has_attr(node, "axes")) {
    GB_ASSIGN_OR_RETURN(a.axes, nn::attr_ints_or(node, "axes"));
    a.has_axes = true;
  }
  return std::unique_ptr<Op>(new SqueezeOp(std::move(a)));
}

}  // namespace glassbox::ops
