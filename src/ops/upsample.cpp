// Upsample (float32), opsets 7-9 (deprecated by Resize): nearest / linear with
// asymmetric coordinates; scales is an attribute (7-8) or an input (9).
#include <cmath>

#include "ops/resize_common.h"

namespace glassbox::ops {
namespace {

struct UpsampleAttrs {
  kernels::ResizeMode mode = kernels::ResizeMode::kNearest;  // "nearest" | "linear" ("bilinear" accepted)
  std::vector<float> scales;                                 // opsets 7-8
  bool scales_from_input = false;                            // opset 9
};

class UpsampleOp final : public Op {
 public:
  explicit UpsampleOp(UpsampleAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "X"));
    std::vector<float> scales = a_.scales;
    if (a_.scales_from_input) {
      GB_ASSIGN_OR_RETURN(const Tensor* s, nn::need_input(ctx, 1, "scales"));
      GB_RETURN_IF_ERROR(nn::need_float32(ctx, *s, "scales"));
      scales.assign(s->data<float>(), s->data<float>() + s->numel());
    }
    const int64_t r = x->rank();
    if (static_cast<int64_t>(scales.size()) != r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "scales must have one entry per input dim");
    std::vector<kernels::ResizeAxisParams> params(static_cast<size_t>(r));
    Shape out(static_cast<size_t>(r));
    for (int64_t d = 0; d < r; ++d) {
      if (!(scales[d] > 0.f) || !std::isfinite(scales[d]))
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "scales must be positive and finite");
      const double o = std::floor(static_cast<double>(x->shape()[d]) * scales[d]);
      if (o > 9.0e15) return nn::node_error(ctx, ErrorCode::kLimitExceeded, "scaled output dim is too large");
      out[d] = static_cast<int64_t>(o);
      params[d].mode = a_.mode;
      params[d].coord = kernels::CoordMode::kAsymmetric;
      params[d].nearest = kernels::NearestMode::kSimple;
      params[d].scale = scales[d];
    }
    return nn::run_resize(ctx, *x, out, params, 0.f);
  }

 private:
  UpsampleAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Upsample(const graph::Node& node, int64_t opset) {
  UpsampleAttrs a;
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "nearest"));
  if (mode == "nearest") a.mode = kernels::ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear") a.mode = kernels::ResizeMode::kLinear;
  else return make_error(ErrorCode::kUnsupported, "Upsample mode '" + mode + "' is not supported");
  a.scales_from_input = opset >= 9;
  if (!a.scales_from_input) {
    GB_ASSIGN_OR_RETURN(a.scales, nn::attr_floats_or(node, "scales"));
    if (a.scales.empty()) return make_error(ErrorCode::kInvalidModel, "attribute 'scales' is required");
  }
  return std::unique_ptr<Op>(new UpsampleOp(std::move(a)));
}

}  // namespace glassbox::ops
