// Slice: starts/ends/axes as attributes before opset 10; starts/ends/axes/steps
// as inputs from 10. Out-of-range starts/ends are clamped as the spec says.
#include <algorithm>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct SliceAttrs {
  bool from_inputs = true;                   // opset >= 10
  std::vector<int64_t> starts, ends, axes;   // opset < 10
};

class SliceOp final : public Op {
 public:
  explicit SliceOp(SliceAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    std::vector<int64_t> starts = a_.starts, ends = a_.ends, axes = a_.axes, steps;
    if (a_.from_inputs) {
      GB_ASSIGN_OR_RETURN(const Tensor* st, nn::need_input(ctx, 1, "starts"));
      GB_ASSIGN_OR_RETURN(const Tensor* en, nn::need_input(ctx, 2, "ends"));
      GB_ASSIGN_OR_RETURN(starts, nn::read_ints(ctx, *st, "starts"));
      GB_ASSIGN_OR_RETURN(ends, nn::read_ints(ctx, *en, "ends"));
      if (ctx.input(3)) {
        GB_ASSIGN_OR_RETURN(axes, nn::read_ints(ctx, *ctx.input(3), "axes"));
      }
      if (ctx.input(4)) {
        GB_ASSIGN_OR_RETURN(steps, nn::read_ints(ctx, *ctx.input(4), "steps"));
      }
    }
    const int64_t r = x->rank();
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "starts, ends, axes and steps differ in length");
    std::vector<int64_t> begin(static_cast<size_t>(r), 0), step(static_cast<size_t>(r), 1);
    Shape out = x->shape();
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (size_t i = 0; i < starts.size(); ++i) {
      GB_ASSIGN_OR_RETURN(int64_t ax, nn::norm_axis(&ctx, axes[i], r, "axes entry"));
      if (seen[ax]) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "axes has a repeated entry");
      seen[ax] = true;
      const int64_t dim = x->shape()[ax], st = steps[i];
      if (st == 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "steps must not be 0");
      int64_t s = starts[i], e = ends[i];
      // Negative values count from the back; below -dim they clamp (and INT64_MIN must not overflow).
      if (s < 0) s = s < -dim ? 0 : s + dim;
      if (e < 0) e = e < -dim ? -1 : e + dim;
      int64_t n;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        n = e > s ? (e - s + st - 1) / st : 0;
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        n = s > e ? (s - e + (-st) - 1) / (-st) : 0;
      }
      begin[ax] = s;
      step[ax] = st;
      out[ax] = n;
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    if (y->numel() == 0) return Status::ok_status();
    std::vector<int64_t> strides(static_cast<size_t>(r));
    int64_t s = 1, offset = 0;
    for (int64_t d = r - 1; d >= 0; --d) {
      strides[d] = s * step[d];
      offset += begin[d] * s;
      s *= x->shape()[d];
    }
    const size_t es = dtype_size(x->dtype());
    kernels::strided_copy(es, static_cast<int>(r), out.data(), static_cast<const char*>(x->raw()) + offset * es,
                          strides.data(), y->mutable_raw(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  SliceAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Slice(const graph::Node& node, int64_t opset) {
  SliceAttrs a;
  a.from_inputs = opset >= 10;
  if (!a.from_inputs) {
    GB_ASSIGN_OR_RETURN(a.starts, nn::attr_ints_or(node, "starts"));
    GB_ASSIGN_OR_RETURN(a.ends, nn::attr_ints_or(node, "ends"));
    GB_ASSIGN_OR_RETURN(a.axes, nn::attr_ints_or(node, "axes"));
  }
  return std::unique_ptr<Op>(new SliceOp(std::move(a)));
}

}  // namespace glassbox::ops
