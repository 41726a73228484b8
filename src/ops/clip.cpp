// Clip: y = min(max(x, min), max).
// opset 6-10: `min`/`max` float attributes (defaults: lowest/highest float).
// opset 11+: optional inputs 1 (min) and 2 (max), scalars of x's dtype;
// opset 12+ adds integer types. Opsets < 6 (consumed_inputs) are not registered.
#include <algorithm>
#include <limits>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct ClipAttrs {  // opset 6-10 only
  float min = std::numeric_limits<float>::lowest();  // lower bound
  float max = std::numeric_limits<float>::max();     // upper bound
};

class ClipOp final : public Op {
 public:
  ClipOp(bool bounds_as_inputs, ClipAttrs attrs) : inputs_(bounds_as_inputs), attrs_(attrs) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    return dispatch_dtype<NumericTypes>(x->dtype(), "Clip", [&]<class T>() -> Status {
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (!inputs_) {
        lo = static_cast<T>(attrs_.min);
        hi = static_cast<T>(attrs_.max);
      } else {
        for (size_t i = 1; i <= 2; ++i) {
          const Tensor* b = ctx.input(i);
          if (!b || !b->defined()) continue;
          if (b->dtype() != x->dtype() || b->numel() != 1)
            return op_error(ctx, ErrorCode::kInvalidArgument,
                            std::string(i == 1 ? "min" : "max") + " must be a scalar of the input's dtype, got " +
                                dtype_name(b->dtype()) + " " + shape_to_string(b->shape()));
          (i == 1 ? lo : hi) = b->data<T>()[0];
        }
      }
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      // min(max(x, lo), hi): when lo > hi every element becomes hi, as in numpy.clip.
      parallel_unary(ctx.pool(), x->data<T>(), y->mutable_data<T>(), x->numel(),
                     [lo, hi](T v) { return std::min(std::max(v, lo), hi); });
      return {};
    });
  }

 private:
  bool inputs_;
  ClipAttrs attrs_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Clip(const graph::Node& node, int64_t opset) {
  ClipAttrs a;
  if (opset >= 11) {
    GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
    return std::unique_ptr<Op>(new ClipOp(true, a));
  }
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"min", "max"}));
  GB_ASSIGN_OR_RETURN(a.min, attr_float(node, "min", a.min));
  GB_ASSIGN_OR_RETURN(a.max, attr_float(node, "max", a.max));
  return std::unique_ptr<Op>(new ClipOp(false, a));
}

}  // namespace glassbox::ops
