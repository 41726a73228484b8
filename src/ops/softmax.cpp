// Softmax, LogSoftmax, Hardmax.
// opset 1-12: input coerced to 2-D at `axis` (default 1): rows = prod(dims[:axis]),
//             the function runs over prod(dims[axis:]).
// opset 13+:  the function runs over dims[axis] alone (default axis -1).
#include "kernels/softmax.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct SoftmaxAttrs {
  int64_t axis = -1;  // opset 13+ default; 1 before
};

class SoftmaxOp final : public Op {
 public:
  SoftmaxOp(kernels::SoftmaxKind kind, SoftmaxAttrs a, bool coerce_2d) : kind_(kind), a_(a), coerce_(coerce_2d) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    if (x->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kUnsupported,
                      std::string("supports float32 only, got ") + dtype_name(x->dtype()), "cast the input to float32");
    const Shape& s = x->shape();
    const int64_t rank = x->rank();
    int64_t axis = 0;
    if (rank > 0) {
      GB_ASSIGN_OR_RETURN(axis, normalize_axis(a_.axis, rank));
    }
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= s[i];
      else if (i == axis || coerce_) n *= s[i];
      else inner *= s[i];
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, s));
    if (x->numel() == 0) return {};
    const float* px = x->data<float>();
    float* py = y->mutable_data<float>();
    const auto kind = kind_;
    ctx.pool().parallel_for(outer * inner, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, n)),
                            [&](int64_t b, int64_t e) { kernels::softmax_f32(px, py, n, inner, b, e, kind); });
    return {};
  }

 private:
  kernels::SoftmaxKind kind_;
  SoftmaxAttrs a_;
  bool coerce_;
};

Result<std::unique_ptr<Op>> make_softmax(const graph::Node& node, int64_t opset, kernels::SoftmaxKind kind) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis"}));
  SoftmaxAttrs a;
  a.axis = opset >= 13 ? -1 : 1;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", a.axis));
  return std::unique_ptr<Op>(new SoftmaxOp(kind, a, opset < 13));
}

}  // namespace

Result<std::unique_ptr<Op>> create_Softmax(const graph::Node& node, int64_t opset) {
  return make_softmax(node, opset, kernels::SoftmaxKind::kSoftmax);
}
Result<std::unique_ptr<Op>> create_LogSoftmax(const graph::Node& node, int64_t opset) {
  return make_softmax(node, opset, kernels::SoftmaxKind::kLogSoftmax);
}
Result<std::unique_ptr<Op>> create_Hardmax(const graph::Node& node, int64_t opset) {
  return make_softmax(node, opset, kernels::SoftmaxKind::kHardmax);
}

}  // namespace glassbox::ops
