// One dtype dispatch helper instead of if/else ladders in every op:
//
//   return dispatch_dtype<NumericTypes>(x.dtype(), "Add", [&]<class T>() -> Status {
//     ... kernel<T>(...) ...; return {};
//   });
//
// The lambda is instantiated for each C++ type of the list; at run time the one
// matching the DataType is called. Unlisted dtypes fail with kUnsupported naming
// the dtype and the supported ones.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "glassbox/error.h"
#include "glassbox/tensor.h"
#include "kernels/half.h"

namespace glassbox::ops {

using kernels::BFloat16;
using kernels::Float16;

template <class... Ts>
struct TypeList {};

// C++ type <-> DataType.
template <class T> constexpr DataType dtype_of();
template <> constexpr DataType dtype_of<float>() { return DataType::kFloat32; }
template <> constexpr DataType dtype_of<double>() { return DataType::kFloat64; }
template <> constexpr DataType dtype_of<int8_t>() { return DataType::kInt8; }
template <> constexpr DataType dtype_of<int16_t>() { return DataType::kInt16; }
template <> constexpr DataType dtype_of<int32_t>() { return DataType::kInt32; }
template <> constexpr DataType dtype_of<int64_t>() { return DataType::kInt64; }
template <> constexpr DataType dtype_of<uint8_t>() { return DataType::kUInt8; }
template <> constexpr DataType dtype_of<uint16_t>() { return DataType::kUInt16; }
template <> constexpr DataType dtype_of<uint32_t>() { return DataType::kUInt32; }
template <> constexpr DataType dtype_of<uint64_t>() { return DataType::kUInt64; }
template <> constexpr DataType dtype_of<bool>() { return DataType::kBool; }
template <> constexpr DataType dtype_of<Float16>() { return DataType::kFloat16; }
template <> constexpr DataType dtype_of<BFloat16>() { return DataType::kBFloat16; }

using FloatTypes = TypeList<float, double>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedNumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
// Every fixed-size dtype (for data movement and Cast).
using AllTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                          bool, Float16, BFloat16>;

template <class... Ts>
std::string type_list_names(TypeList<Ts...>) {
  std::string s;
  ((s += (s.empty() ? "" : ", "), s += dtype_name(dtype_of<Ts>())), ...);
  return s;
}

namespace detail {
template <class F, class T, class... Rest>
Status dispatch_impl(DataType dt, F& f, bool& matched) {
  if (dt == dtype_of<T>()) {
    matched = true;
    return f.template operator()<T>();
  }
  if constexpr (sizeof...(Rest) > 0) return dispatch_impl<F, Rest...>(dt, f, matched);
  return {};
}
template <class F, class... Ts>
Status dispatch_list(DataType dt, F& f, bool& matched, TypeList<Ts...>) {
  return dispatch_impl<F, Ts...>(dt, f, matched);
}
}  // namespace detail

// Calls f.template operator()<T>() for the T of `dt` in List; `what` names the
// op for the error message.
template <class List, class F>
Status dispatch_dtype(DataType dt, const std::string& what, F&& f) {
  bool matched = false;
  Status s = detail::dispatch_list(dt, f, matched, List{});
  if (!matched)
    return make_error(ErrorCode::kUnsupported,
                      what + ": dtype " + dtype_name(dt) + " is not supported (supported: " +
                          type_list_names(List{}) + ")",
                      {}, "cast the input to a supported dtype when exporting");
  return s;
}

// True if dt is one of the List's dtypes.
template <class... Ts>
constexpr bool dtype_in(DataType dt, TypeList<Ts...>) {
  return ((dt == dtype_of<Ts>()) || ...);
}

}  // namespace glassbox::ops
