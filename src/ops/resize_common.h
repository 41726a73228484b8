// Shared by Resize and Upsample: runs the separable resize pass by pass
// (only over axes whose size or coordinates change), through scratch tensors.
#pragma once

#include <cstring>

#include "kernels/resize.h"
#include "ops/nn_args.h"

namespace glassbox::ops::nn {

inline Status run_resize(ComputeContext& ctx, const Tensor& x, const Shape& out,
                         const std::vector<kernels::ResizeAxisParams>& params, float extrapolation_value) {
  GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, out));
  if (y->numel() == 0) return Status::ok_status();
  if (x.numel() == 0)
    return node_error(ctx, ErrorCode::kInvalidArgument, "cannot resize an empty input to a non-empty output");
  const int64_t r = x.rank();
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < r; ++d)
    if (out[d] != x.shape()[d] || params[d].coord == kernels::CoordMode::kTfCropAndResize ||
        (params[d].scale != 1.f && params[d].coord != kernels::CoordMode::kAlignCorners))
      axes.push_back(d);
  if (axes.empty()) {
    std::memcpy(y->mutable_raw(), x.raw(), x.nbytes());
    return Status::ok_status();
  }
  Shape cur = x.shape();
  const float* src = x.data<float>();
  Tensor scratch[2];
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k];
    Shape next = cur;
    next[d] = out[d];
    float* dst;
    if (k + 1 == axes.size()) {
      dst = y->mutable_data<float>();
    } else {
      GB_ASSIGN_OR_RETURN(scratch[k % 2], ctx.allocate_scratch(DataType::kFloat32, next));
      dst = scratch[k % 2].mutable_data<float>();
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= cur[i];
    for (int64_t i = d + 1; i < r; ++i) inner *= cur[i];
    const kernels::ResizeTaps taps = kernels::resize_taps(params[d], cur[d], out[d]);
    kernels::resize_axis_f32(outer, cur[d], out[d], inner, taps, extrapolation_value, src, dst, &ctx.pool());
    src = dst;
    cur = next;
  }
  return Status::ok_status();
}

}  // namespace glassbox::ops::nn
