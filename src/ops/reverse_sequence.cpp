// ReverseSequence (opset 10): for each batch entry b, reverses the first
// sequence_lens[b] elements along time_axis; the rest are copied. batch_axis
// and time_axis are 0 and 1 (either way round); input has rank >= 2.
#include <cstring>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct ReverseSequenceAttrs {
  int64_t batch_axis = 1;  // 0 or 1
  int64_t time_axis = 0;   // the other one
};

class ReverseSequenceOp final : public Op {
 public:
  explicit ReverseSequenceOp(ReverseSequenceAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* lens_t, nn::need_input(ctx, 1, "sequence_lens"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    if (x->rank() < 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "input " + shape_to_string(x->shape()) + " needs rank >= 2");
    const int64_t nb = x->shape()[a_.batch_axis], nt = x->shape()[a_.time_axis];
    if (lens_t->dtype() != DataType::kInt64 || lens_t->shape() != Shape{nb})
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            std::string("sequence_lens must be int64[") + std::to_string(nb) + "], got " +
                                dtype_name(lens_t->dtype()) + shape_to_string(lens_t->shape()));
    const int64_t* lens = lens_t->data<int64_t>();
    for (int64_t b = 0; b < nb; ++b)
      if (lens[b] < 0 || lens[b] > nt)
        return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                              "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                                  " is outside [0, " + std::to_string(nt) + "]");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    int64_t inner = 1;
    for (int64_t i = 2; i < x->rank(); ++i) inner *= x->shape()[i];
    const size_t run = static_cast<size_t>(inner) * dtype_size(x->dtype());
    const char* src = static_cast<const char*>(x->raw());
    char* dst = static_cast<char*>(y->mutable_raw());
    // Offset of (batch b, time t) in units of `run`.
    auto at = [&](int64_t b, int64_t t) { return static_cast<size_t>(a_.time_axis == 0 ? t * nb + b : b * nt + t); };
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t t = 0; t < nt; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        std::memcpy(dst + at(b, t) * run, src + at(b, from) * run, run);
      }
    return Status::ok_status();
  }

 private:
  ReverseSequenceAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ReverseSequence(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"batch_axis", "time_axis"}));
  ReverseSequenceAttrs a;
  GB_ASSIGN_OR_RETURN(a.batch_axis, attr_int(node, "batch_axis", 1));
  GB_ASSIGN_OR_RETURN(a.time_axis, attr_int(node, "time_axis", 0));
  if (!((a.batch_axis == 0 && a.time_axis == 1) || (a.batch_axis == 1 && a.time_axis == 0)))
    return unsupported_attr("batch_axis", "batch_axis and time_axis must be 0 and 1 (either order)");
  return std::unique_ptr<Op>(new ReverseSequenceOp(a));
}

}  // namespace glassbox::ops
