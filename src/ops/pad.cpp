// Pad: modes constant / reflect / edge. Opsets 2-10: pads and value are
// attributes; 11+: pads (int64 input, [begin..., end...]) and an optional
// constant_value input. Negative pads crop.
#include <cstring>

#include "kernels/pad.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct PadAttrs {
  kernels::PadMode mode = kernels::PadMode::kConstant;  // "constant" | "reflect" | "edge"
  bool from_inputs = true;                               // opset >= 11
  std::vector<int64_t> pads;                             // opsets < 11
  float value = 0.f;                                     // opsets < 11: constant fill value
};

class PadOp final : public Op {
 public:
  explicit PadOp(PadAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const size_t es = dtype_size(x->dtype());
    std::vector<int64_t> pads = a_.pads;
    alignas(16) unsigned char value[16] = {};
    if (a_.from_inputs) {
      GB_ASSIGN_OR_RETURN(const Tensor* pt, nn::need_input(ctx, 1, "pads"));
      GB_ASSIGN_OR_RETURN(pads, nn::read_ints(ctx, *pt, "pads"));
      if (const Tensor* cv = ctx.input(2); cv && cv->numel() > 0) {
        if (cv->dtype() != x->dtype())
          return nn::node_error(ctx, ErrorCode::kInvalidArgument, "constant_value dtype differs from data");
        std::memcpy(value, cv->raw(), es);
      }
    } else if (a_.value != 0.f) {
      GB_RETURN_IF_ERROR(nn::need_float32(ctx, *x, "data (with a nonzero value attribute)"));
      std::memcpy(value, &a_.value, 4);
    }
    const int64_t r = x->rank();
    if (static_cast<int64_t>(pads.size()) != 2 * r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "pads has " + std::to_string(pads.size()) + " entries; expected 2 * rank = " +
                                std::to_string(2 * r) + " for input " + shape_to_string(x->shape()));
    Shape out(static_cast<size_t>(r));
    for (int64_t d = 0; d < r; ++d) {
      if (__builtin_add_overflow(x->shape()[d], pads[d], &out[d]) || __builtin_add_overflow(out[d], pads[d + r], &out[d]))
        return nn::node_error(ctx, ErrorCode::kLimitExceeded, "padded dim " + std::to_string(d) + " overflows int64");
      if (out[d] < 0)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "pads crop dim " + std::to_string(d) + " below 0");
      const bool padded = pads[d] > 0 || pads[d + r] > 0;
      if (padded && a_.mode != kernels::PadMode::kConstant && x->shape()[d] == 0)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "cannot reflect/edge-pad an empty dim");
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    kernels::pad_nd(es, static_cast<int>(r), x->shape().data(), out.data(), pads.data(), a_.mode, value, x->raw(),
                    y->mutable_raw(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  PadAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Pad(const graph::Node& node, int64_t opset) {
  PadAttrs a;
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", "constant"));
  if (mode == "constant") a.mode = kernels::PadMode::kConstant;
  else if (mode == "reflect") a.mode = kernels::PadMode::kReflect;
  else if (mode == "edge") a.mode = kernels::PadMode::kEdge;
  else return make_error(ErrorCode::kUnsupported, "Pad mode '" + mode + "' is not supported (constant, reflect, edge)");
  a.from_inputs = opset >= 11;
  if (!a.from_inputs) {
    if (!nn::has_attr(node, "pads")) return make_error(ErrorCode::kInvalidModel, "attribute 'pads' is required");
    GB_ASSIGN_OR_RETURN(a.pads, nn::attr_ints_or(node, "pads"));
    GB_ASSIGN_OR_RETURN(a.value, attr_float(node, "value", 0.f));
  }
  return std::unique_ptr<Op>(new PadOp(std::move(a)));
}

}  // namespace glassbox::ops
