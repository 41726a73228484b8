// Counts the fields of an aggregate at compile time, so a table that documents
// every field of an options struct can static_assert that it misses none.
#pragma once

#include <cstddef>
#include <utility>

namespace glassbox {
namespace detail {

struct AnyField {
  template <class T>
  operator T() const;  // never defined: only used in unevaluated contexts
};

template <class T, class... Args>
concept BraceConstructible = requires { T{std::declval<Args>()...}; };

template <class T, class... Args>
constexpr std::size_t count_fields() {
  if constexpr (BraceConstructible<T, Args..., AnyField>) return count_fields<T, Args..., AnyField>();
  else return sizeof...(Args);
}

}  // namespace detail

template <class T>
constexpr std::size_t aggregate_field_count() {
  return detail::count_fields<T>();
}

}  // namespace glassbox
