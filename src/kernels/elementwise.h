// Shared elementwise drivers: one loop each, instantiated with a one-line
// scalar function (the op's definition). Contiguous / scalar-broadcast cases are
// split out so the compiler vectorizes them. Vectorized math (exp, tanh, erf)
// for float32 lives in kernels/x86/vmath_avx2.h and is chosen by the caller.
#pragma once

#include <cstdint>

// The project builds at -O2, where GCC 12 only vectorizes loops with a known
// trip count; these loops are the hot path of every elementwise op, so they
// get the loop vectorizer with the dynamic cost model (SSE2 baseline).
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

namespace glassbox::kernels {

// y[i] = f(x[i]) for i in [0, n).
template <class In, class Out, class F>
inline void map_unary(const In* x, Out* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// y[i] = f(a[i * sa], b[i * sb]) for i in [0, n); sa/sb are 0 (broadcast) or 1.
template <class A, class B, class Out, class F>
inline void map_binary(const A* a, int64_t sa, const B* b, int64_t sb, Out* y, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 0 && sb == 1) {
    const A av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else if (sa == 1 && sb == 0) {
    const B bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

// y[i] = f(c[i * sc], a[i * sa], b[i * sb]) (Where).
template <class C, class A, class B, class Out, class F>
inline void map_ternary(const C* c, int64_t sc, const A* a, int64_t sa, const B* b, int64_t sb, Out* y, int64_t n,
                        F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(c[i * sc], a[i * sa], b[i * sb]);
}

}  // namespace glassbox::kernels

#pragma GCC pop_options
