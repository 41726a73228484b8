// Numpy-style multidirectional broadcasting (ONNX "Broadcasting in ONNX"):
// the output shape, and a walk over the output as contiguous runs with each
// input's element offset, so kernels see plain (pointer, stride, length) loops.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/tensor.h"

namespace glassbox::ops {

// Output shape of broadcasting all `shapes`; kInvalidArgument when incompatible.
Result<Shape> broadcast_shapes(std::span<const Shape> shapes);
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Iterates the output of a broadcast as runs of run_length() elements. Within a
// run, input k advances by inner_stride(k) elements (0 = broadcast, 1 = along).
// Adjacent dims are coalesced, so same-shape inputs give one run of numel.
class BroadcastWalk {
 public:
  // `out` must be broadcast_shapes(inputs).
  BroadcastWalk(const Shape& out, std::span<const Shape> inputs);

  int64_t num_runs() const { return num_runs_; }
  int64_t run_length() const { return run_length_; }
  int64_t inner_stride(size_t k) const { return inner_stride_[k]; }
  size_t num_inputs() const { return inner_stride_.size(); }

  // Calls fn(run_index, out_offset, in_offsets) for runs [begin, end);
  // in_offsets[k] is input k's element offset at the start of the run.
  template <class Fn>
  void for_runs(int64_t begin, int64_t end, Fn&& fn) const {
    if (begin >= end) return;
    const size_t nd = outer_dims_.size();
    const size_t nk = inner_stride_.size();
    // The odometer on the stack for the usual ranks and input counts (one walk per chunk of every elementwise op).
    int64_t idx_small[kSmall] = {}, offs_small[kSmall] = {};
    std::vector<int64_t> idx_big(nd > kSmall ? nd : 0, 0), offs_big(nk > kSmall ? nk : 0, 0);
    int64_t* idx = nd > kSmall ? idx_big.data() : idx_small;
    int64_t* offs = nk > kSmall ? offs_big.data() : offs_small;
    int64_t r = begin;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = r % outer_dims_[d];
      r /= outer_dims_[d];
      for (size_t k = 0; k < nk; ++k) offs[k] += idx[d] * outer_strides_[d * nk + k];
    }
    for (int64_t run = begin; run < end; ++run) {
      fn(run, run * run_length_, static_cast<const int64_t*>(offs));
      for (size_t d = nd; d-- > 0;) {  // odometer increment
        for (size_t k = 0; k < nk; ++k) offs[k] += outer_strides_[d * nk + k];
        if (++idx[d] < outer_dims_[d]) break;
        for (size_t k = 0; k < nk; ++k) offs[k] -= outer_dims_[d] * outer_strides_[d * nk + k];
        idx[d] = 0;
      }
    }
  }

 private:
  static constexpr size_t kSmall = 8;
  int64_t num_runs_ = 1;
  int64_t run_length_ = 1;
  std::vector<int64_t> inner_stride_;   // per input
  std::vector<int64_t> outer_dims_;     // coalesced outer dims
  std::vector<int64_t> outer_strides_;  // [dim][input] element strides
};

}  // namespace glassbox::ops
