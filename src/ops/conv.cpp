// Conv (float32, 1-3 spatial dims): pads/auto_pad/strides/dilations/group; also glassbox::FusedConv
// (conv_epilogue_fusion: the same op with an activation applied as a oneDNN post-op; fused_conv.cpp).
// Runs oneDNN (primitive + reordered weights cached per input shape and weight
// buffer); falls back to the reference loops when oneDNN refuses a geometry.
#include <map>
#include <mutex>

#include "kernels/conv.h"
#include "ops/conv_attrs.h"

namespace glassbox::ops {
namespace {

struct ConvAttrs {
  nn::SpatialAttrs spatial;  // auto_pad, kernel_shape, strides, dilations, pads
  int64_t group = 1;         // channel groups; C and M must both divide by it
};

class ConvOp final : public Op {
 public:
  ConvOp(ConvAttrs a, kernels::ConvActivation act) : a_(std::move(a)), act_(act) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* w, nn::need_input(ctx, 1, "W"));
    const Tensor* b = ctx.input(2);
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *w, "W"));
    if (b) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *b, "B"));
    const int64_t r = x->rank();
    if (r < 3 || r > 5 || w->rank() != r)
      return nn::node_error(ctx, ErrorCode::kUnsupported,
                            "X " + shape_to_string(x->shape()) + " and W " + shape_to_string(w->shape()) +
                                " must both have rank 3, 4 or 5 (1-3 spatial dims)");
    const int64_t n = x->shape()[0], c = x->shape()[1], m = w->shape()[0], g = a_.group;
    if (c != w->shape()[1] * g || m % g != 0)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "X " + shape_to_string(x->shape()) + " with group " + std::to_string(g) +
                                " does not match W " + shape_to_string(w->shape()));
    if (b && b->numel() != m)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "B must have " + std::to_string(m) + " elements");
    std::vector<int64_t> in(x->shape().begin() + 2, x->shape().end());
    std::vector<int64_t> kernel(w->shape().begin() + 2, w->shape().end());
    if (!a_.spatial.kernel_shape.empty() && a_.spatial.kernel_shape != kernel)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "kernel_shape " + shape_to_string(a_.spatial.kernel_shape) + " does not match W " +
                                shape_to_string(w->shape()));
    GB_ASSIGN_OR_RETURN(nn::Resolved rs, nn::resolve_forward(ctx, a_.spatial, in, kernel, false));
    Shape out{n, m};
    out.insert(out.end(), rs.out.begin(), rs.out.end());
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, out));
    if (y->numel() == 0) return Status::ok_status();
    kernels::ConvGeometry geo;
    geo.spatial = static_cast<int>(in.size());
    geo.n = n;
    geo.c_in = c;
    geo.c_out = m;
    geo.group = g;
    for (size_t i = 0; i < in.size(); ++i) {
      geo.in[i] = in[i];
      geo.out[i] = rs.out[i];
      geo.kernel[i] = kernel[i];
      geo.stride[i] = rs.stride[i];
      geo.dilation[i] = rs.dilation[i];
      geo.pad_begin[i] = rs.pad_begin[i];
      geo.pad_end[i] = rs.pad_end[i];
    }
    const float* bp = b ? b->data<float>() : nullptr;
    std::shared_ptr<kernels::DnnlConv> prim =
        x->numel() == 0 ? nullptr : get_primitive(geo, x->shape(), w->data<float>(), bp);  // empty channels: just the bias
    if (prim) {
      prim->run(x->data<float>(), y->mutable_data<float>(), ctx.pool().size());
    } else {
      kernels::conv_f32_reference(geo, x->data<float>(), w->data<float>(), bp, y->mutable_data<float>());
      kernels::conv_activation_reference(act_, y->mutable_data<float>(), y->numel());
    }
    return Status::ok_status();
  }

 private:
  std::shared_ptr<kernels::DnnlConv> get_primitive(const kernels::ConvGeometry& geo, const Shape& xs, const float* w,
                                                   const float* b) const {
    std::vector<int64_t> key = xs;
    key.push_back(reinterpret_cast<intptr_t>(w));
    key.push_back(reinterpret_cast<intptr_t>(b));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= kMaxCached) cache_.clear();  // bounded: shape signatures rarely exceed a few
    std::shared_ptr<kernels::DnnlConv> p = kernels::DnnlConv::create(geo, false, w, b, act_);
    cache_[key] = p;
    return p;
  }

  static constexpr size_t kMaxCached = 16;
  ConvAttrs a_;
  kernels::ConvActivation act_;
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<kernels::DnnlConv>> cache_;
};

}  // namespace

Result<std::unique_ptr<Op>> nn::create_conv_op(const graph::Node& node, kernels::ConvActivation activation) {
  ConvAttrs a;
  GB_ASSIGN_OR_RETURN(a.spatial, nn::parse_spatial_attrs(node));
  GB_ASSIGN_OR_RETURN(a.group, attr_int(node, "group", 1));
  if (a.group < 1) return make_error(ErrorCode::kInvalidModel, "group must be >= 1");
  return std::unique_ptr<Op>(new ConvOp(std::move(a), activation));
}

Result<std::unique_ptr<Op>> create_Conv(const graph::Node& node, int64_t) { return nn::create_conv_op(node, {}); }

}  // namespace glassbox::ops
