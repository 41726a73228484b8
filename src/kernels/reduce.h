// Reductions over the middle axis of an [outer, n, inner] view (any set of
// adjacent axes coalesces to this). A reducer R provides:
//   using Acc; Acc init(); void step(Acc&, T x); T finish(Acc, int64_t n);
// so each ONNX Reduce* op is a few lines in ops/reduce.cpp.
#pragma once

#include <cstdint>

namespace glassbox::kernels {

// y[o * inner + i] = R over x[o, 0..n, i], for outputs [begin, end) of outer * inner.
template <class T, class R>
void reduce_middle(const T* x, T* y, int64_t n, int64_t inner, int64_t begin, int64_t end, const R& r) {
  for (int64_t out = begin; out < end; ++out) {
    const int64_t o = out / inner, i = out % inner;
    const T* p = x + o * n * inner + i;
    auto acc = r.init();
    for (int64_t k = 0; k < n; ++k) r.step(acc, p[k * inner]);
    y[out] = r.finish(acc, n);
  }
}

// Arg-reduction over the middle axis: index of the best element by `better`
// (strict: first index wins; with select_last, the last among equals wins).
template <class T, class Better>
void arg_reduce_middle(const T* x, int64_t* y, int64_t n, int64_t inner, int64_t begin, int64_t end,
                       bool select_last, Better better) {
  for (int64_t out = begin; out < end; ++out) {
    const int64_t o = out / inner, i = out % inner;
    const T* p = x + o * n * inner + i;
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k) {
      const T v = p[k * inner], b = p[best * inner];
      if (better(v, b) || (select_last && !better(b, v))) best = k;
    }
    y[out] = best;
  }
}

}  // namespace glassbox::kernels
