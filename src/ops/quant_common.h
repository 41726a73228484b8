// Shared by the quantization ops (QuantizeLinear, DequantizeLinear,
// ConvInteger, QLinearConv): scale / zero-point reading (per tensor, or per
// axis from opset 13) and the integer convolution's geometry.
#pragma once

#include <string>
#include <vector>

#include "kernels/quantize.h"
#include "ops/conv_attrs.h"
#include "ops/dtype_dispatch.h"

namespace glassbox::ops::quant {

// Integer zero-point values as int32 (int8, uint8 or int32 tensors).
inline Result<std::vector<int32_t>> read_zero_points(const ComputeContext& ctx, const Tensor& zp, const char* what) {
  std::vector<int32_t> v(static_cast<size_t>(zp.numel()));
  Status s = dispatch_dtype<TypeList<uint8_t, int8_t, int32_t>>(zp.dtype(), what, [&]<class T>() -> Status {
    for (int64_t i = 0; i < zp.numel(); ++i) v[i] = static_cast<int32_t>(zp.data<T>()[i]);
    return Status::ok_status();
  });
  if (!s.ok()) return nn::node_error(ctx, ErrorCode::kUnsupported, s.error().what);
  return v;
}

// Scale and zero point of a (de)quantization, expanded to axis_dim entries, and
// the [outer, axis_dim, inner] view of x they apply to.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int64_t outer = 1, axis_dim = 1, inner = 1;
};

// scale: float32 scalar / 1 element (per tensor) or, when per_axis_allowed,
// 1-D of x.shape[axis]; zero_point (may be nullptr = 0) has scale's shape.
inline Result<QuantParams> read_quant_params(const ComputeContext& ctx, const Tensor& x, const Tensor& scale,
                                             const Tensor* zero_point, int64_t axis, bool per_axis_allowed) {
  if (scale.dtype() != DataType::kFloat32)
    return nn::node_error(ctx, ErrorCode::kUnsupported,
                          std::string("scale must be float32, got ") + dtype_name(scale.dtype()));
  QuantParams q;
  q.outer = x.numel();
  // One element (scalar or [1]) is per tensor; [1] per axis of size 1 is the same thing.
  if (!(scale.numel() == 1 && scale.rank() <= 1)) {
    if (!per_axis_allowed || scale.rank() != 1)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "scale " + shape_to_string(scale.shape()) +
                                (per_axis_allowed ? " must be a scalar or 1-D"
                                                  : " must be a scalar (per-axis quantization needs opset 13)"));
    GB_ASSIGN_OR_RETURN(int64_t ax, nn::norm_axis(&ctx, axis, x.rank()));
    if (scale.numel() != x.shape()[ax])
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "scale has " + std::to_string(scale.numel()) + " entries, but input " +
                                shape_to_string(x.shape()) + " has " + std::to_string(x.shape()[ax]) + " at axis " +
                                std::to_string(ax));
    q.outer = 1;
    q.inner = 1;
    for (int64_t i = 0; i < ax; ++i) q.outer *= x.shape()[i];
    for (int64_t i = ax + 1; i < x.rank(); ++i) q.inner *= x.shape()[i];
    q.axis_dim = x.shape()[ax];
  }
  q.scale.assign(scale.data<float>(), scale.data<float>() + scale.numel());
  if (zero_point) {
    if (zero_point->numel() != scale.numel())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "zero_point " + shape_to_string(zero_point->shape()) + " does not match scale " +
                                shape_to_string(scale.shape()));
    GB_ASSIGN_OR_RETURN(q.zero_point, read_zero_points(ctx, *zero_point, "zero_point"));
  } else {
    q.zero_point.assign(q.scale.size(), 0);
  }
  return q;
}

// Attributes of the integer convolutions (ConvInteger, QLinearConv): Conv's spatial ones and group.
struct IntegerConvAttrs {
  nn::SpatialAttrs spatial;  // auto_pad, kernel_shape, strides, dilations, pads
  int64_t group = 1;         // channel groups; C and M must both divide by it
};

inline Result<IntegerConvAttrs> parse_integer_conv_attrs(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  IntegerConvAttrs a;
  GB_ASSIGN_OR_RETURN(a.spatial, nn::parse_spatial_attrs(node));
  GB_ASSIGN_OR_RETURN(a.group, attr_int(node, "group", 1));
  if (a.group < 1) return make_error(ErrorCode::kInvalidModel, "group must be >= 1");
  return a;
}

// Geometry of ConvInteger / QLinearConv: X [N, C, spatial...], W [M, C/group, kernel...].
inline Result<kernels::ConvGeometry> integer_conv_geometry(const ComputeContext& ctx, const nn::SpatialAttrs& sa,
                                                           int64_t group, const Tensor& x, const Tensor& w,
                                                           Shape& out) {
  const int64_t r = x.rank();
  if (r < 3 || r > 5 || w.rank() != r)
    return nn::node_error(ctx, ErrorCode::kUnsupported,
                          "X " + shape_to_string(x.shape()) + " and W " + shape_to_string(w.shape()) +
                              " must both have rank 3, 4 or 5 (1-3 spatial dims)");
  const int64_t n = x.shape()[0], c = x.shape()[1], m = w.shape()[0];
  if (c != w.shape()[1] * group || m % group != 0)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "X " + shape_to_string(x.shape()) + " with group " + std::to_string(group) +
                              " does not match W " + shape_to_string(w.shape()));
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (!sa.kernel_shape.empty() && sa.kernel_shape != kernel)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "kernel_shape " + shape_to_string(sa.kernel_shape) + " does not match W " +
                              shape_to_string(w.shape()));
  GB_ASSIGN_OR_RETURN(nn::Resolved rs, nn::resolve_forward(ctx, sa, in, kernel, false));
  kernels::ConvGeometry g;
  g.spatial = static_cast<int>(in.size());
  g.n = n;
  g.c_in = c;
  g.c_out = m;
  g.group = group;
  out = {n, m};
  for (size_t i = 0; i < in.size(); ++i) {
    g.in[i] = in[i];
    g.out[i] = rs.out[i];
    g.kernel[i] = kernel[i];
    g.stride[i] = rs.stride[i];
    g.dilation[i] = rs.dilation[i];
    g.pad_begin[i] = rs.pad_begin[i];
    g.pad_end[i] = rs.pad_end[i];
    out.push_back(rs.out[i]);
  }
  return g;
}

// A scalar zero point (or per output channel when per_channel_len > 0).
inline Result<std::vector<int32_t>> conv_zero_points(const ComputeContext& ctx, const Tensor* zp, DataType want,
                                                     int64_t per_channel_len, const char* what) {
  const int64_t n = per_channel_len > 0 ? per_channel_len : 1;
  if (!zp) return std::vector<int32_t>(static_cast<size_t>(n), 0);
  if (zp->dtype() != want)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string(what) + " has dtype " + dtype_name(zp->dtype()) + ", expected " +
                              dtype_name(want));
  GB_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_zero_points(ctx, *zp, what));
  if (v.size() == 1) return std::vector<int32_t>(static_cast<size_t>(n), v[0]);
  if (static_cast<int64_t>(v.size()) != n || zp->rank() != 1)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string(what) + " " + shape_to_string(zp->shape()) + " must be a scalar" +
                              (per_channel_len > 0 ? " or have " + std::to_string(n) + " entries (one per output channel)"
                                                   : std::string()));
  return v;
}

}  // namespace glassbox::ops::quant
