// Op-layer drivers for elementwise ops: split work over the thread pool and
// walk broadcasts, calling the kernels/elementwise.h loops with the op's
// scalar function. Used by unary_math.cpp, activations.cpp, binary_ops.cpp, ...
#pragma once

#include <algorithm>
#include <array>
#include <span>

#include "kernels/elementwise.h"
#include "ops/broadcast.h"
#include "ops/op.h"

namespace glassbox::ops {

// Elements per task: below this, threading costs more than it saves.
inline constexpr int64_t kElementwiseGrain = 32768;

inline Error op_error(const ComputeContext& ctx, ErrorCode code, std::string what, std::string fix = {}) {
  return make_error(code, std::move(what), "node '" + ctx.node_name() + "'", std::move(fix));
}

inline Result<const Tensor*> require_input(const ComputeContext& ctx, size_t i, const char* what) {
  const Tensor* t = ctx.input(i);
  if (!t || !t->defined())
    return op_error(ctx, ErrorCode::kInvalidArgument,
                      "required input " + std::to_string(i) + " (" + what + ") is missing");
  return t;
}

template <class In, class Out, class F>
void parallel_unary(ThreadPool& pool, const In* x, Out* y, int64_t n, F f) {
  pool.parallel_for(n, kElementwiseGrain,
                    [&](int64_t b, int64_t e) { kernels::map_unary(x + b, y + b, e - b, f); });
}

// out = f(a, b) with multidirectional broadcasting; `out` already has the
// broadcast shape.
template <class A, class B, class Out, class F>
void parallel_binary(ThreadPool& pool, const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const std::array<Shape, 2> shapes{a.shape(), b.shape()};
  BroadcastWalk walk(out.shape(), shapes);
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* py = out.mutable_data<Out>();
  const int64_t sa = walk.inner_stride(0), sb = walk.inner_stride(1);
  if (walk.num_runs() == 1) {  // one run: split it
    pool.parallel_for(walk.run_length(), kElementwiseGrain, [&](int64_t s, int64_t e) {
      kernels::map_binary(pa + s * sa, sa, pb + s * sb, sb, py + s, e - s, f);
    });
    return;
  }
  const int64_t len = walk.run_length();
  pool.parallel_for(walk.num_runs(), std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, len)),
                    [&](int64_t rb, int64_t re) {
                      walk.for_runs(rb, re, [&](int64_t, int64_t out_off, const int64_t* offs) {
                        kernels::map_binary(pa + offs[0], sa, pb + offs[1], sb, py + out_off, len, f);
                      });
                    });
}

template <class C, class A, class B, class Out, class F>
void parallel_ternary(ThreadPool& pool, const Tensor& c, const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const std::array<Shape, 3> shapes{c.shape(), a.shape(), b.shape()};
  BroadcastWalk walk(out.shape(), shapes);
  const C* pc = c.data<C>();
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* py = out.mutable_data<Out>();
  const int64_t sc = walk.inner_stride(0), sa = walk.inner_stride(1), sb = walk.inner_stride(2);
  const int64_t len = walk.run_length();
  if (walk.num_runs() == 1) {
    pool.parallel_for(len, kElementwiseGrain, [&](int64_t s, int64_t e) {
      kernels::map_ternary(pc + s * sc, sc, pa + s * sa, sa, pb + s * sb, sb, py + s, e - s, f);
    });
    return;
  }
  pool.parallel_for(walk.num_runs(), std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, len)),
                    [&](int64_t rb, int64_t re) {
                      walk.for_runs(rb, re, [&](int64_t, int64_t out_off, const int64_t* offs) {
                        kernels::map_ternary(pc + offs[0], sc, pa + offs[1], sa, pb + offs[2], sb, py + out_off, len,
                                             f);
                      });
                    });
}

}  // namespace glassbox::ops
