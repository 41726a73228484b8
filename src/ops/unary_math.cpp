// Elementwise math ops, one scalar function each (ggml-style unary table).
// Float-only ops accept float32/float64; float16/bfloat16 are refused clearly.
// Opset history: versions before 6 only add the legacy `consumed_inputs`
// attribute, which check_known_attrs refuses; otherwise semantics are unchanged.
#include <cmath>

#include "kernels/vmath.h"
#include "ops/unary.h"

namespace glassbox::ops {

#define GB_UNARY(OpType, Types, expr)                                                   \
  Result<std::unique_ptr<Op>> create_##OpType(const graph::Node& node, int64_t) {       \
    return make_unary<Types>(node, [](auto x) -> decltype(x) { return expr; });         \
  }
// Same, with a vectorized float32 array kernel.
#define GB_UNARY_VEC(OpType, Types, expr, vec)                                          \
  Result<std::unique_ptr<Op>> create_##OpType(const graph::Node& node, int64_t) {       \
    return make_unary<Types>(node, [](auto x) -> decltype(x) { return expr; }, {}, vec); \
  }

GB_UNARY(Abs, NumericTypes, x < 0 ? static_cast<decltype(x)>(-x) : x)
GB_UNARY(Neg, SignedNumericTypes, static_cast<decltype(x)>(-x))
// The last branch returns x itself: 0 for 0 (any sign), and NaN stays NaN as in ONNX Runtime.
GB_UNARY(Sign, NumericTypes, x > 0 ? static_cast<decltype(x)>(1) : (x < 0 ? static_cast<decltype(x)>(-1) : x))
GB_UNARY(Reciprocal, FloatTypes, 1 / x)
GB_UNARY(Floor, FloatTypes, std::floor(x))
GB_UNARY(Ceil, FloatTypes, std::ceil(x))
GB_UNARY(Round, FloatTypes, std::nearbyint(x))  // half to even (default rounding mode)
GB_UNARY(Sqrt, FloatTypes, std::sqrt(x))
GB_UNARY_VEC(Exp, FloatTypes, std::exp(x), kernels::vexp_f32)
GB_UNARY(Log, FloatTypes, std::log(x))
GB_UNARY_VEC(Erf, FloatTypes, std::erf(x), kernels::verf_f32)
GB_UNARY(Sin, FloatTypes, std::sin(x))
GB_UNARY(Cos, FloatTypes, std::cos(x))
GB_UNARY(Tan, FloatTypes, std::tan(x))
GB_UNARY(Asin, FloatTypes, std::asin(x))
GB_UNARY(Acos, FloatTypes, std::acos(x))
GB_UNARY(Atan, FloatTypes, std::atan(x))
GB_UNARY(Sinh, FloatTypes, std::sinh(x))
GB_UNARY(Cosh, FloatTypes, std::cosh(x))
GB_UNARY(Asinh, FloatTypes, std::asinh(x))
GB_UNARY(Acosh, FloatTypes, std::acosh(x))
GB_UNARY(Atanh, FloatTypes, std::atanh(x))

#undef GB_UNARY
#undef GB_UNARY_VEC

Result<std::unique_ptr<Op>> create_Not(const graph::Node& node, int64_t) {
  return make_unary<TypeList<bool>>(node, [](bool x) { return !x; });
}

Result<std::unique_ptr<Op>> create_IsNaN(const graph::Node& node, int64_t) {
  return make_unary<FloatTypes>(node, [](auto x) { return std::isnan(x); });
}

// IsInf: detect_negative / detect_positive select which infinities count.
Result<std::unique_ptr<Op>> create_IsInf(const graph::Node& node, int64_t) {
  GB_ASSIGN_OR_RETURN(int64_t detect_negative, attr_int(node, "detect_negative", 1));
  GB_ASSIGN_OR_RETURN(int64_t detect_positive, attr_int(node, "detect_positive", 1));
  const bool neg = detect_negative != 0, pos = detect_positive != 0;
  return make_unary<FloatTypes>(
      node, [neg, pos](auto x) { return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)); },
      {"detect_negative", "detect_positive"});
}

}  // namespace glassbox::ops
