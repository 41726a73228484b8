// SplitToSequence (opset 11+): cuts `input` along `axis` into a sequence. `split`
// absent: pieces of 1 (the axis removed when keepdims = 0); a scalar k: pieces of k,
// the last one smaller when the dim is not divisible; a 1-D tensor: the piece sizes.
#include "kernels/data_movement.h"
#include "ops/sequence_util.h"
#include "ops/split_sizes.h"

namespace glassbox::ops {
namespace {

struct SplitToSequenceAttrs {
  int64_t axis = 0;       // spec default
  bool keepdims = true;   // spec default 1; only used when `split` is absent
};

class SplitToSequenceOp final : public Op {
 public:
  explicit SplitToSequenceOp(SplitToSequenceAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, r));
    const int64_t dim = x->shape()[axis];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* s = ctx.input(1)) {
      GB_ASSIGN_OR_RETURN(std::vector<int64_t> split, nn::read_ints(ctx, *s, "split"));
      if (s->rank() == 0) {
        const int64_t k = split[0];
        if (k <= 0)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument, "split " + std::to_string(k) + " must be positive");
        for (int64_t done = 0; done < dim; done += k) sizes.push_back(std::min(k, dim - done));
      } else if (s->rank() == 1) {
        GB_RETURN_IF_ERROR(check_split_sizes(ctx, split, dim));
        sizes = std::move(split);
      } else {
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "split must be a scalar or 1-D, got shape " + shape_to_string(s->shape()));
      }
    } else {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !a_.keepdims;
    }
    const size_t es = dtype_size(x->dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape()[d];
    for (int64_t d = axis + 1; d < r; ++d) inner *= x->shape()[d];
    const size_t src_pitch = static_cast<size_t>(dim * inner) * es;
    std::vector<Tensor> elements;
    elements.reserve(sizes.size());
    size_t offset = 0;
    for (int64_t size : sizes) {
      Shape os = x->shape();
      os[axis] = size;
      GB_ASSIGN_OR_RETURN(Tensor y, ctx.allocate_scratch(x->dtype(), os));
      const size_t row = static_cast<size_t>(size * inner) * es;
      if (row > 0 && outer > 0)
        kernels::copy_rows(outer, row, static_cast<const char*>(x->raw()) + offset, src_pitch, y.mutable_raw(), row,
                           &ctx.pool());
      offset += row;
      if (squeeze) {
        os.erase(os.begin() + axis);
        GB_ASSIGN_OR_RETURN(y, y.reshaped(os));
      }
      elements.push_back(std::move(y));
    }
    return ctx.set_output_sequence(0, std::move(elements));
  }

 private:
  SplitToSequenceAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_SplitToSequence(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "keepdims"}));
  SplitToSequenceAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", 0));
  GB_ASSIGN_OR_RETURN(int64_t keepdims, attr_int(node, "keepdims", 1));
  a.keepdims = keepdims != 0;
  return std::unique_ptr<Op>(new SplitToSequenceOp(a));
}

}  // namespace glassbox::ops
