// Pow: Z = X ^ Y with multidirectional broadcasting. Since opset 12 the
// exponent may have a different dtype than the base; the output has the base's.
#include <cmath>
#include <type_traits>

#include "ops/binary.h"

namespace glassbox::ops {
namespace {

template <class T, class E>
T pow_scalar(T x, E y) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    if (y < 0) return x == 1 ? T(1) : (x == static_cast<T>(-1) ? ((y & 1) ? x : T(1)) : T(0));
    T r = 1, b = x;
    for (auto e = y; e > 0; e >>= 1) {  // square-and-multiply; wraps like integer numpy
      if (e & 1) r = static_cast<T>(r * b);
      b = static_cast<T>(b * b);
    }
    return r;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::pow(x, static_cast<T>(y)));
  } else {
    return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  }
}

using BaseTypes = TypeList<float, double, int32_t, int64_t>;

class PowOp final : public Op {
 public:
  explicit PowOp(LegacyBroadcast legacy) : legacy_(legacy) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* y, require_input(ctx, 1, "Y"));
    Tensor y_view;
    if (legacy_.active) {  // Pow-1: Y broadcasts to X only as the node's attributes say
      GB_ASSIGN_OR_RETURN(y_view, legacy_.adapt(ctx, *x, *y, "Y"));
      y = &y_view;
    }
    GB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(x->shape(), y->shape()));
    return dispatch_dtype<BaseTypes>(x->dtype(), "Pow base", [&]<class T>() -> Status {
      return dispatch_dtype<NumericTypes>(y->dtype(), "Pow exponent", [&]<class E>() -> Status {
        GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(0, x->dtype(), shape));
        if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
          // Common float cases first: x^2 and x^0.5 are exact and much cheaper.
          if (y->numel() == 1 && y->data<float>()[0] == 2.f) {
            parallel_unary(ctx.pool(), x->data<float>(), z->mutable_data<float>(), x->numel(),
                           [](float v) { return v * v; });
            return {};
          }
        }
        parallel_binary<T, E, T>(ctx.pool(), *x, *y, *z, [](T a, E b) { return pow_scalar(a, b); });
        return {};
      });
    });
  }

 private:
  LegacyBroadcast legacy_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Pow(const graph::Node& node, int64_t opset) {
  if (opset < 7) GB_RETURN_IF_ERROR(check_known_attrs(node, {"broadcast", "axis"}));
  else GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  GB_ASSIGN_OR_RETURN(LegacyBroadcast legacy, LegacyBroadcast::from(node, opset));
  return std::unique_ptr<Op>(new PowOp(legacy));
}

}  // namespace glassbox::ops
