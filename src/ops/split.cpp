// Split: cuts the input along `axis` into the outputs. Sizes come from the
// `split` attribute (opsets 2-12), the second input (opset 1 and 13+), or are
// equal (the last part smaller when not divisible is refused, as before opset 18).
#include <numeric>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"
#include "ops/split_sizes.h"

namespace glassbox::ops {
namespace {

struct SplitAttrs {
  int64_t axis = 0;                 // axis to split; negative from opset 11
  bool split_from_input = false;    // opset 1 or >= 13
  std::vector<int64_t> split;       // opsets 2-12: part sizes (empty = equal parts)
};

class SplitOp final : public Op {
 public:
  explicit SplitOp(SplitAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    const int64_t dim = x->shape()[axis];
    std::vector<int64_t> split = a_.split;
    if (a_.split_from_input && ctx.input(1)) {
      GB_ASSIGN_OR_RETURN(split, nn::read_ints(ctx, *ctx.input(1), "split"));
    }
    const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
    if (split.empty()) {
      if (n_out == 0 || dim % n_out != 0)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "axis dim " + std::to_string(dim) + " does not split evenly into " +
                                  std::to_string(n_out) + " outputs");
      split.assign(static_cast<size_t>(n_out), dim / n_out);
    }
    if (static_cast<int64_t>(split.size()) != n_out)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "split has " + std::to_string(split.size()) + " entries for " + std::to_string(n_out) +
                                " outputs");
    GB_RETURN_IF_ERROR(check_split_sizes(ctx, split, dim));
    const size_t es = dtype_size(x->dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape()[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= x->shape()[d];
    const size_t src_pitch = static_cast<size_t>(dim * inner) * es;
    size_t offset = 0;
    for (int64_t i = 0; i < n_out; ++i) {
      Shape os = x->shape();
      os[axis] = split[i];
      GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(static_cast<size_t>(i), x->dtype(), os));
      const size_t row = static_cast<size_t>(split[i] * inner) * es;
      kernels::copy_rows(outer, row, static_cast<const char*>(x->raw()) + offset, src_pitch, y->mutable_raw(), row,
                         &ctx.pool());
      offset += row;
    }
    return Status::ok_status();
  }

 private:
  SplitAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Split(const graph::Node& node, int64_t opset) {
  SplitAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 0));
  a.split_from_input = opset == 1 || opset >= 13;
  if (!a.split_from_input || opset == 1) {
    GB_ASSIGN_OR_RETURN(a.split, nn::attr_ints_or(node, "split"));
  }
  return std::unique_ptr<Op>(new SplitOp(std::move(a)));
}

}  // namespace glassbox::ops
