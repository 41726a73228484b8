// Elementwise binary ops with multidirectional broadcasting, one scalar
// function each. Opsets before 7 used `broadcast`/`axis` attributes
// (unidirectional, axis-aligned); check_known_attrs refuses them, and without
// them old opsets require equal shapes, which this implementation covers.
#include <cmath>
#include <type_traits>

#include "ops/binary.h"

namespace glassbox::ops {

namespace {
using BoolTypes = TypeList<bool>;
using EqualTypes = TypeList<bool, float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                            uint64_t>;

// Integer division by zero yields 0 instead of trapping (the spec leaves it undefined).
template <class T>
T safe_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));  // avoids MIN/-1 overflow
  }
  return static_cast<T>(a / b);
}

// Mod with fmod=0: result takes the divisor's sign (Python %), integers only.
template <class T>
T mod_floor(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

// Mod with fmod=1: result takes the dividend's sign (C fmod / %).
template <class T>
T mod_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return 0;
    return static_cast<T>(a % b);
  }
}
}  // namespace

#define GB_BINARY(OpType, Types, expr)                                                           \
  Result<std::unique_ptr<Op>> create_##OpType(const graph::Node& node, int64_t) {                \
    return make_binary<Types>(node, [](auto a, decltype(a) b) { return expr; });                 \
  }

#define GB_ARITHMETIC(OpType, Types, expr)                                                       \
  Result<std::unique_ptr<Op>> create_##OpType(const graph::Node& node, int64_t opset) {          \
    return make_arithmetic<Types>(node, opset, [](auto a, decltype(a) b) { return expr; });      \
  }

GB_ARITHMETIC(Add, NumericTypes, static_cast<decltype(a)>(a + b))
GB_ARITHMETIC(Sub, NumericTypes, static_cast<decltype(a)>(a - b))
GB_ARITHMETIC(Mul, NumericTypes, static_cast<decltype(a)>(a * b))
GB_ARITHMETIC(Div, NumericTypes, safe_div(a, b))
GB_BINARY(Equal, EqualTypes, a == b)
GB_BINARY(Less, NumericTypes, a < b)
GB_BINARY(Greater, NumericTypes, a > b)
GB_BINARY(LessOrEqual, NumericTypes, a <= b)
GB_BINARY(GreaterOrEqual, NumericTypes, a >= b)
GB_BINARY(And, BoolTypes, a && b)
GB_BINARY(Or, BoolTypes, a || b)
GB_BINARY(Xor, BoolTypes, a != b)

#undef GB_BINARY
#undef GB_ARITHMETIC

struct ModAttrs {
  int64_t fmod = 0;  // 0: sign of divisor (integers only); 1: sign of dividend (C fmod)
};
Result<std::unique_ptr<Op>> create_Mod(const graph::Node& node, int64_t) {
  ModAttrs a;
  GB_ASSIGN_OR_RETURN(a.fmod, attr_int(node, "fmod", a.fmod));
  if (a.fmod != 0 && a.fmod != 1) return unsupported_attr("fmod", "must be 0 or 1");
  if (a.fmod == 1) {
    using Types = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                           Float16>;
    return make_binary<Types>(node, [](auto x, decltype(x) y) {
      // fmod is exact, so float16 through float32 and back loses nothing
      if constexpr (std::is_same_v<decltype(x), Float16>)
        return kernels::float_to_half(std::fmod(kernels::half_to_float(x), kernels::half_to_float(y)));
      else return mod_trunc(x, y);
    }, {"fmod"});
  }
  // fmod=0 on floats is invalid per spec: only integer types are dispatched.
  return make_binary<IntTypes>(node, [](auto x, decltype(x) y) { return mod_floor(x, y); }, {"fmod"});
}

struct BitShiftAttrs {
  std::string direction;  // required: "LEFT" or "RIGHT"
};
Result<std::unique_ptr<Op>> create_BitShift(const graph::Node& node, int64_t) {
  BitShiftAttrs a;
  GB_ASSIGN_OR_RETURN(a.direction, attr_string(node, "direction", ""));
  using UTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
  // Shifting by >= the bit width yields 0 (undefined in C++).
  if (a.direction == "LEFT")
    return make_binary<UTypes>(
        node,
        [](auto x, decltype(x) s) -> decltype(x) {
          return s >= sizeof(x) * 8 ? decltype(x)(0) : static_cast<decltype(x)>(x << s);
        },
        {"direction"});
  if (a.direction == "RIGHT")
    return make_binary<UTypes>(
        node,
        [](auto x, decltype(x) s) -> decltype(x) {
          return s >= sizeof(x) * 8 ? decltype(x)(0) : static_cast<decltype(x)>(x >> s);
        },
        {"direction"});
  return unsupported_attr("direction", "must be \"LEFT\" or \"RIGHT\", got \"" + a.direction + "\"");
}

}  // namespace glassbox::ops
