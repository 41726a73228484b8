// Shape: the input's shape as a 1-D int64 tensor; start/end (opset 15) take a slice of it.
#include <algorithm>
#include <limits>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct ShapeAttrs {
  int64_t start = 0;                                     // first dim to report; negative counts from the back
  int64_t end = std::numeric_limits<int64_t>::max();     // one past the last dim; default: all dims
};

class ShapeOp final : public Op {
 public:
  explicit ShapeOp(ShapeAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    const int64_t r = x->rank();
    auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t s = clamp(a_.start), e = clamp(a_.end);
    const int64_t n = std::max<int64_t>(0, e - s);
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kInt64, {n}));
    for (int64_t i = 0; i < n; ++i) y->mutable_data<int64_t>()[i] = x->shape()[static_cast<size_t>(s + i)];
    return Status::ok_status();
  }

 private:
  ShapeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Shape(const graph::Node& node, int64_t opset) {
  ShapeAttrs a;
  if (opset >= 15) {
    GB_ASSIGN_OR_RETURN(a.start, attr_int(node, "start", 0));
    GB_ASSIGN_OR_RETURN(a.end, attr_int(node, "end", std::numeric_limits<int64_t>::max()));
  }
  return std::unique_ptr<Op>(new ShapeOp(a));
}

}  // namespace glassbox::ops
