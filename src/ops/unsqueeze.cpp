// Unsqueeze: inserts size-1 dims at `axes` (of the output). Axes attribute
// before opset 13, input from 13. Output aliases the input.
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct UnsqueezeAttrs {
  bool axes_from_input = false;  // opset >= 13
  std::vector<int64_t> axes;     // opset < 13 (required)
};

class UnsqueezeOp final : public Op {
 public:
  explicit UnsqueezeOp(UnsqueezeAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    std::vector<int64_t> axes = a_.axes;
    if (a_.axes_from_input) {
      GB_ASSIGN_OR_RETURN(const Tensor* at, nn::need_input(ctx, 1, "axes"));
      GB_ASSIGN_OR_RETURN(axes, nn::read_ints(ctx, *at, "axes"));
    }
    const int64_t r = x->rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> ins(static_cast<size_t>(r), false);
    for (int64_t ax : axes) {
      GB_ASSIGN_OR_RETURN(int64_t a, nn::norm_axis(&ctx, ax, r, "axes entry"));
      if (ins[a]) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "axes has a repeated entry");
      ins[a] = true;
    }
    Shape out;
    size_t j = 0;
    for (int64_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : x->shape()[j++]);
    GB_ASSIGN_OR_RETURN(Tensor view, x->reshaped(out));
    return ctx.alias_output(0, view);
  }

 private:
  UnsqueezeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Unsqueeze(const graph::Node& node, int64_t opset) {
  UnsqueezeAttrs a;
  a.axes_from_input = opset >= 13;
  if (!a.axes_from_input) {
    if (!nn::has_attr(node, "axes"))
      return make_error(ErrorCode::kInvalidModel, "attribute 'axes' is required before opset 13");
    GB_ASSIGN_OR_RETURN(a.axes, nn::attr_ints_or(node, "axes"));
  }
  return std::unique_ptr<Op>(new UnsqueezeOp(std::move(a)));
}

}  // namespace glassbox::ops
