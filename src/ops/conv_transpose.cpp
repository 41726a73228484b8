// ConvTranspose (float32, 1-3 spatial dims): strides/dilations/group/pads,
// output_padding, output_shape and auto_pad as in the spec. oneDNN
// deconvolution when it accepts the geometry, reference loops otherwise.
#include <map>
#include <mutex>

#include "kernels/conv.h"
#include "ops/conv_attrs.h"

namespace glassbox::ops {
namespace {

struct ConvTransposeAttrs {
  nn::SpatialAttrs spatial;             // auto_pad, kernel_shape, strides, dilations, pads
  int64_t group = 1;                    // channel groups
  std::vector<int64_t> output_padding;  // extra size added to the end of each spatial dim
  std::vector<int64_t> output_shape;    // explicit spatial output size (pads are then derived)
};

class ConvTransposeOp final : public Op {
 public:
  explicit ConvTransposeOp(ConvTransposeAttrs a) : a_(std::move(a)) {}
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
                                " must both have rank 3, 4 or 5");
    const int64_t n = x->shape()[0], c = x->shape()[1], g = a_.group;
    if (w->shape()[0] != c || c % g != 0)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "X " + shape_to_string(x->shape()) + " does not match W " + shape_to_string(w->shape()) +
                                " with group " + std::to_string(g));
    const int64_t m = w->shape()[1] * g;
    if (b && b->numel() != m)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "B must have " + std::to_string(m) + " elements");
    const size_t sp = static_cast<size_t>(r - 2);
    const auto& A = a_.spatial;
    auto check_len = [&](const std::vector<int64_t>& v, size_t want, const char* what) -> Status {
      if (!v.empty() && v.size() != want)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              std::string(what) + " has " + std::to_string(v.size()) + " entries; expected " +
                                  std::to_string(want) + " for " + std::to_string(sp) + " spatial dims");
      return Status::ok_status();
    };
    GB_RETURN_IF_ERROR(check_len(A.kernel_shape, sp, "kernel_shape"));
    GB_RETURN_IF_ERROR(check_len(A.strides, sp, "strides"));
    GB_RETURN_IF_ERROR(check_len(A.dilations, sp, "dilations"));
    GB_RETURN_IF_ERROR(check_len(A.pads, 2 * sp, "pads"));
    GB_RETURN_IF_ERROR(check_len(a_.output_padding, sp, "output_padding"));
    GB_RETURN_IF_ERROR(check_len(a_.output_shape, sp, "output_shape"));
    kernels::ConvGeometry geo;
    geo.spatial = static_cast<int>(sp);
    geo.n = n;
    geo.c_in = c;
    geo.c_out = m;
    geo.group = g;
    Shape out{n, m};
    for (size_t i = 0; i < sp; ++i) {
      const int64_t in = x->shape()[i + 2], k = w->shape()[i + 2];
      if (!A.kernel_shape.empty() && A.kernel_shape[i] != k)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "kernel_shape does not match W");
      const int64_t s = A.strides.empty() ? 1 : A.strides[i], d = A.dilations.empty() ? 1 : A.dilations[i];
      const int64_t op = a_.output_padding.empty() ? 0 : a_.output_padding[i];
      const int64_t full = s * (in - 1) + op + (k - 1) * d + 1;
      int64_t pb = A.pads.empty() ? 0 : A.pads[i], pe = A.pads.empty() ? 0 : A.pads[i + sp], o;
      if (!a_.output_shape.empty() || A.auto_pad == "SAME_UPPER" || A.auto_pad == "SAME_LOWER") {
        o = !a_.output_shape.empty() ? a_.output_shape[i] : in * s;
        const int64_t total = std::max<int64_t>(0, full - o);
        if (A.auto_pad == "SAME_UPPER") {
          pb = total / 2;
          pe = total - pb;
        } else {
          pb = total - total / 2;
          pe = total / 2;
        }
      } else {
        if (A.auto_pad == "VALID") pb = pe = 0;
        o = full - pb - pe;
      }
      if (o < 0) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "output size is negative");
      out.push_back(o);
      geo.in[i] = in;
      geo.out[i] = o;
      geo.kernel[i] = k;
      geo.stride[i] = s;
      geo.dilation[i] = d;
      geo.pad_begin[i] = pb;
      geo.pad_end[i] = (in - 1) * s + (k - 1) * d + 1 - pb - o;  // oneDNN's right pad (output_padding folded in)
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kFloat32, out));
    if (y->numel() == 0) return Status::ok_status();
    const float* bp = b ? b->data<float>() : nullptr;
    std::shared_ptr<kernels::DnnlConv> prim;
    if (x->numel() > 0) prim = get_primitive(geo, x->shape(), w->data<float>(), bp);
    if (prim) prim->run(x->data<float>(), y->mutable_data<float>(), ctx.pool().size());
    else kernels::conv_transpose_f32_reference(geo, x->data<float>(), w->data<float>(), bp, y->mutable_data<float>());
    return Status::ok_status();
  }

 private:
  std::shared_ptr<kernels::DnnlConv> get_primitive(const kernels::ConvGeometry& geo, const Shape& xs, const float* w,
                                                   const float* b) const {
    // Negative right pads (large output_padding) are outside what oneDNN accepts.
    for (int i = 0; i < geo.spatial; ++i)
      if (geo.pad_end[i] < 0 || geo.pad_begin[i] < 0) return nullptr;
    std::vector<int64_t> key = xs;
    key.push_back(reinterpret_cast<intptr_t>(w));
    key.push_back(reinterpret_cast<intptr_t>(b));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= 16) cache_.clear();
    std::shared_ptr<kernels::DnnlConv> p = kernels::DnnlConv::create(geo, true, w, b);
    cache_[key] = p;
    return p;
  }

  ConvTransposeAttrs a_;
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<kernels::DnnlConv>> cache_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ConvTranspose(const graph::Node& node, int64_t) {
  ConvTransposeAttrs a;
  GB_ASSIGN_OR_RETURN(a.spatial, nn::parse_spatial_attrs(node));
  GB_ASSIGN_OR_RETURN(a.group, attr_int(node, "group", 1));
  GB_ASSIGN_OR_RETURN(a.output_padding, nn::attr_ints_or(node, "output_padding"));
  GB_ASSIGN_OR_RETURN(a.output_shape, nn::attr_ints_or(node, "output_shape"));
  if (a.group < 1) return make_error(ErrorCode::kInvalidModel, "group must be >= 1");
  return std::unique_ptr<Op>(new ConvTransposeOp(std::move(a)));
}

}  // namespace glassbox::ops
