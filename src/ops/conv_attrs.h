// Spatial attributes shared by Conv, ConvTranspose and the pools (names and
// defaults as in the ONNX spec), and the output-size / padding arithmetic.
#pragma once

#include <string>
#include <vector>

#include "kernels/conv.h"
#include "ops/nn_args.h"

namespace glassbox::ops::nn {

struct SpatialAttrs {
  std::string auto_pad = "NOTSET";     // NOTSET | SAME_UPPER | SAME_LOWER | VALID
  std::vector<int64_t> kernel_shape;   // empty = from the weights (Conv); required for pools
  std::vector<int64_t> strides;        // empty = 1 per spatial dim
  std::vector<int64_t> dilations;      // empty = 1 per spatial dim
  std::vector<int64_t> pads;           // [begin..., end...]; empty = 0
  int64_t ceil_mode = 0;               // pools (opset 10): ceil instead of floor for the output size
};

inline Result<SpatialAttrs> parse_spatial_attrs(const graph::Node& node) {
  SpatialAttrs a;
  GB_ASSIGN_OR_RETURN(a.auto_pad, attr_string(node, "auto_pad", "NOTSET"));
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" && a.auto_pad != "VALID")
    return make_error(ErrorCode::kInvalidModel, "auto_pad '" + a.auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  GB_ASSIGN_OR_RETURN(a.kernel_shape, attr_ints_or(node, "kernel_shape"));
  GB_ASSIGN_OR_RETURN(a.strides, attr_ints_or(node, "strides"));
  GB_ASSIGN_OR_RETURN(a.dilations, attr_ints_or(node, "dilations"));
  GB_ASSIGN_OR_RETURN(a.pads, attr_ints_or(node, "pads"));
  GB_ASSIGN_OR_RETURN(a.ceil_mode, attr_int(node, "ceil_mode", 0));
  for (int64_t v : a.strides)
    if (v < 1) return make_error(ErrorCode::kInvalidModel, "strides must be >= 1");
  for (int64_t v : a.dilations)
    if (v < 1) return make_error(ErrorCode::kInvalidModel, "dilations must be >= 1");
  for (int64_t v : a.kernel_shape)
    if (v < 1) return make_error(ErrorCode::kInvalidModel, "kernel_shape must be >= 1");
  for (int64_t v : a.pads)
    if (v < 0) return make_error(ErrorCode::kInvalidModel, "pads must be >= 0");
  return a;
}

// Resolved per-dim geometry for one input shape.
struct Resolved {
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end, out;
};

// Checks attribute ranks against the input's spatial rank and computes output
// dims (Conv / pool semantics). `kernel` comes from W or kernel_shape.
inline Result<Resolved> resolve_forward(const ComputeContext& ctx, const SpatialAttrs& a,
                                        const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                        bool ceil_mode) {
  const size_t sp = in.size();
  auto rank_err = [&](const char* what, size_t got, size_t want) {
    return node_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(what) + " has " + std::to_string(got) + " entries, but the input has " +
                          std::to_string(sp) + " spatial dims (expected " + std::to_string(want) + ")");
  };
  if (kernel.size() != sp) return rank_err("kernel_shape", kernel.size(), sp);
  if (!a.strides.empty() && a.strides.size() != sp) return rank_err("strides", a.strides.size(), sp);
  if (!a.dilations.empty() && a.dilations.size() != sp) return rank_err("dilations", a.dilations.size(), sp);
  if (!a.pads.empty() && a.pads.size() != 2 * sp) return rank_err("pads", a.pads.size(), 2 * sp);
  Resolved r;
  r.kernel = kernel;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = a.strides.empty() ? 1 : a.strides[i];
    const int64_t d = a.dilations.empty() ? 1 : a.dilations[i];
    const int64_t ek = (kernel[i] - 1) * d + 1;
    int64_t pb = a.pads.empty() ? 0 : a.pads[i], pe = a.pads.empty() ? 0 : a.pads[i + sp];
    int64_t out;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in[i]);
      pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (a.auto_pad == "VALID") pb = pe = 0;
      const int64_t span = in[i] + pb + pe - ek;
      if (span < 0)
        return node_error(ctx, ErrorCode::kInvalidArgument,
                          "kernel (effective size " + std::to_string(ek) + ") is larger than padded input dim " +
                              std::to_string(in[i] + pb + pe));
      out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // A window may not start in the end padding.
      if (ceil_mode && (out - 1) * s >= in[i] + pb) --out;
    }
    r.stride.push_back(s);
    r.dilation.push_back(d);
    r.pad_begin.push_back(pb);
    r.pad_end.push_back(pe);
    r.out.push_back(out);
  }
  return r;
}

}  // namespace glassbox::ops::nn

#include "kernels/pool.h"

namespace glassbox::ops::nn {

// X [N, C, spatial...] -> pool geometry and output shape; kernel_shape is required.
inline Result<kernels::PoolGeometry> pool_geometry(const ComputeContext& ctx, const SpatialAttrs& a, const Tensor& x,
                                                   Shape& out) {
  if (x.rank() < 3 || x.rank() > 5)
    return node_error(ctx, ErrorCode::kUnsupported,
                      "input " + shape_to_string(x.shape()) + " must have rank 3, 4 or 5 (1-3 spatial dims)");
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  GB_ASSIGN_OR_RETURN(Resolved r, resolve_forward(ctx, a, in, a.kernel_shape, a.ceil_mode != 0));
  kernels::PoolGeometry g;
  g.spatial = static_cast<int>(in.size());
  g.planes = x.shape()[0] * x.shape()[1];
  out = {x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < in.size(); ++i) {
    g.in[i] = in[i];
    g.out[i] = r.out[i];
    g.kernel[i] = r.kernel[i];
    g.stride[i] = r.stride[i];
    g.dilation[i] = r.dilation[i];
    g.pad_begin[i] = r.pad_begin[i];
    g.pad_end[i] = r.pad_end[i];
    out.push_back(r.out[i]);
  }
  return g;
}

// The Conv op (conv.cpp) with `activation` applied to its output: Conv itself ({}) and glassbox::FusedConv.
Result<std::unique_ptr<Op>> create_conv_op(const graph::Node& node, kernels::ConvActivation activation);

}  // namespace glassbox::ops::nn
