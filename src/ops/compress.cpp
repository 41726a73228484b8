// Compress (opset 9; negative axis from 11): keeps the slices along `axis` whose
// condition entry is true; without `axis`, the elements of the flattened input.
// condition is 1-D bool and may be shorter than the axis (missing entries are
// false); a longer one is refused.
#include <cstring>
#include <optional>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct CompressAttrs {
  std::optional<int64_t> axis;  // absent: select from the flattened input
};

class CompressOp final : public Op {
 public:
  explicit CompressOp(CompressAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* cond, nn::need_input(ctx, 1, "condition"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    if (cond->dtype() != DataType::kBool || cond->rank() != 1)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("condition must be 1-D bool, got ") + dtype_name(cond->dtype()) +
                                shape_to_string(cond->shape()));
    int64_t outer = 1, dim = x->numel(), inner = 1;
    int64_t axis = -1;
    if (a_.axis) {
      GB_ASSIGN_OR_RETURN(axis, nn::norm_axis(&ctx, *a_.axis, x->rank()));
      dim = x->shape()[axis];
      for (int64_t i = 0; i < axis; ++i) outer *= x->shape()[i];
      for (int64_t i = axis + 1; i < x->rank(); ++i) inner *= x->shape()[i];
    }
    if (cond->numel() > dim)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "condition has " + std::to_string(cond->numel()) + " entries, more than the " +
                                std::to_string(dim) + (a_.axis ? " slices along the axis" : " input elements"));
    const bool* c = cond->data<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond->numel(); ++i)
      if (c[i]) keep.push_back(i);
    Shape out = a_.axis ? x->shape() : Shape{};
    if (a_.axis) out[axis] = static_cast<int64_t>(keep.size());
    else out.push_back(static_cast<int64_t>(keep.size()));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
    const size_t es = dtype_size(x->dtype()), run = static_cast<size_t>(inner) * es;
    const char* src = static_cast<const char*>(x->raw());
    char* dst = static_cast<char*>(y->mutable_raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k : keep) {
        std::memcpy(dst, src + static_cast<size_t>(o * dim + k) * run, run);
        dst += run;
      }
    return Status::ok_status();
  }

 private:
  CompressAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Compress(const graph::Node& node, int64_t opset) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis"}));
  CompressAttrs a;
  if (node.attr("axis")) {
    GB_ASSIGN_OR_RETURN(int64_t axis, attr_int(node, "axis", 0));
    if (axis < 0 && opset < 11) return unsupported_attr("axis", "negative axis needs opset 11");
    a.axis = axis;
  }
  return std::unique_ptr<Op>(new CompressOp(a));
}

}  // namespace glassbox::ops
