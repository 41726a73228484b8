// CumSum (opset 11+): running sum along `axis` (a scalar input tensor);
// exclusive = 1 leaves out the current element, reverse = 1 runs backwards.
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct CumSumAttrs {
  int64_t exclusive = 0;  // y[i] = sum of x before i (not including i)
  int64_t reverse = 0;    // sum from the end of the axis
};

class CumSumOp final : public Op {
 public:
  explicit CumSumOp(CumSumAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "x"));
    GB_ASSIGN_OR_RETURN(const Tensor* axis_t, require_input(ctx, 1, "axis"));
    GB_ASSIGN_OR_RETURN(auto axis_v, tensor_to_int64s(*axis_t, "axis"));
    if (axis_v.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, "axis must be a scalar");
    const int64_t rank = std::max<int64_t>(1, x->rank());
    GB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_v[0], rank));
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t i = 0; i < x->rank(); ++i) (i < axis ? outer : i == axis ? n : inner) *= x->shape()[i];
    using Types = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>;
    return dispatch_dtype<Types>(x->dtype(), "CumSum", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      const T* px = x->data<T>();
      T* py = y->mutable_data<T>();
      const bool excl = a_.exclusive != 0, rev = a_.reverse != 0;
      ctx.pool().parallel_for(outer * inner, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, n)),
                              [&](int64_t b, int64_t e) {
                                for (int64_t r = b; r < e; ++r) {
                                  const int64_t base = (r / inner) * n * inner + r % inner;
                                  T acc = 0;
                                  for (int64_t s = 0; s < n; ++s) {
                                    const int64_t k = rev ? n - 1 - s : s;
                                    const T v = px[base + k * inner];
                                    if (excl) { py[base + k * inner] = acc; acc = static_cast<T>(acc + v); }
                                    else { acc = static_cast<T>(acc + v); py[base + k * inner] = acc; }
                                  }
                                }
                              });
      return {};
    });
  }

 private:
  CumSumAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_CumSum(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"exclusive", "reverse"}));
  CumSumAttrs a;
  GB_ASSIGN_OR_RETURN(a.exclusive, attr_int(node, "exclusive", a.exclusive));
  GB_ASSIGN_OR_RETURN(a.reverse, attr_int(node, "reverse", a.reverse));
  return std::unique_ptr<Op>(new CumSumOp(a));
}

}  // namespace glassbox::ops
