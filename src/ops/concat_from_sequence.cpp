// ConcatFromSequence (opset 11+): concatenates the elements along `axis`
// (new_axis = 1: stacks them along a new axis, axis in [-r-1, r]). The
// elements must agree in dtype, rank and every dim but the axis; an empty
// sequence is refused (its element shape is unknown).
#include "kernels/data_movement.h"
#include "ops/sequence_util.h"

namespace glassbox::ops {
namespace {

struct ConcatFromSequenceAttrs {
  int64_t axis = 0;      // required by the spec
  bool new_axis = false;  // spec default 0
};

class ConcatFromSequenceOp final : public Op {
 public:
  explicit ConcatFromSequenceOp(ConcatFromSequenceAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const std::vector<Tensor>* s, seq::need_sequence(ctx, 0, "input_sequence"));
    if (s->empty())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "cannot concatenate an empty sequence");
    const Tensor& first = s->front();
    const int64_t r = first.rank();
    GB_ASSIGN_OR_RETURN(int64_t axis, nn::norm_axis(&ctx, a_.axis, a_.new_axis ? r + 1 : r));
    // Work on element shapes with the new axis (size 1) inserted.
    auto shape_of = [&](const Tensor& t) {
      Shape sh = t.shape();
      if (a_.new_axis) sh.insert(sh.begin() + axis, 1);
      return sh;
    };
    Shape out = shape_of(first);
    out[axis] = 0;
    for (size_t e = 0; e < s->size(); ++e) {
      const Tensor& t = (*s)[e];
      GB_RETURN_IF_ERROR(nn::check_movable(ctx, t));
      const Shape sh = shape_of(t);
      bool same = t.dtype() == first.dtype() && t.rank() == r;
      for (int64_t d = 0; same && d < static_cast<int64_t>(sh.size()); ++d) same = d == axis || sh[d] == out[d];
      if (!same)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "element " + std::to_string(e) + " is " + dtype_name(t.dtype()) + shape_to_string(t.shape()) +
                                  ", element 0 is " + dtype_name(first.dtype()) + shape_to_string(first.shape()) +
                                  (a_.new_axis ? " (stacking needs equal shapes)" : " (only the axis dim may differ)"));
      out[axis] += sh[axis];
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, first.dtype(), out));
    const size_t es = dtype_size(first.dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < static_cast<int64_t>(out.size()); ++d) inner *= out[d];
    const size_t dst_pitch = static_cast<size_t>(out[axis] * inner) * es;
    size_t offset = 0;
    for (const Tensor& t : *s) {
      const size_t row = static_cast<size_t>(shape_of(t)[axis] * inner) * es;
      if (row > 0 && outer > 0)
        kernels::copy_rows(outer, row, t.raw(), row, static_cast<char*>(y->mutable_raw()) + offset, dst_pitch, &ctx.pool());
      offset += row;
    }
    return {};
  }

 private:
  ConcatFromSequenceAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ConcatFromSequence(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "new_axis"}));
  ConcatFromSequenceAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int_required(node, "axis"));
  GB_ASSIGN_OR_RETURN(int64_t new_axis, attr_int(node, "new_axis", 0));
  a.new_axis = new_axis != 0;
  return std::unique_ptr<Op>(new ConcatFromSequenceOp(a));
}

}  // namespace glassbox::ops
