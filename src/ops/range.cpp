// Range: start, start+delta, ... up to (not including) limit. Scalars of one
// numeric type; a huge count is stopped by the memory cap (or before, when it
// does not even fit int64).
#include <cmath>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

template <class T>
Status run_range(ComputeContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d) {
  const T start = *s.data<T>(), limit = *l.data<T>(), delta = *d.data<T>();
  if (delta == T(0)) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "delta must not be 0");
  const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  if (!(count < 9.0e18))
    return nn::node_error(ctx, ErrorCode::kLimitExceeded, "Range would produce " + std::to_string(count) + " elements");
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, s.dtype(), {n}));
  T* p = y->mutable_data<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  return Status::ok_status();
}

class RangeOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* s, nn::need_input(ctx, 0, "start"));
    GB_ASSIGN_OR_RETURN(const Tensor* l, nn::need_input(ctx, 1, "limit"));
    GB_ASSIGN_OR_RETURN(const Tensor* d, nn::need_input(ctx, 2, "delta"));
    if (s->dtype() != l->dtype() || s->dtype() != d->dtype() || s->numel() != 1 || l->numel() != 1 || d->numel() != 1)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "start, limit and delta must be scalars of one dtype");
    switch (s->dtype()) {
      case DataType::kFloat32: return run_range<float>(ctx, *s, *l, *d);
      case DataType::kFloat64: return run_range<double>(ctx, *s, *l, *d);
      case DataType::kInt16: return run_range<int16_t>(ctx, *s, *l, *d);
      case DataType::kInt32: return run_range<int32_t>(ctx, *s, *l, *d);
      case DataType::kInt64: return run_range<int64_t>(ctx, *s, *l, *d);
      default:
        return nn::node_error(ctx, ErrorCode::kUnsupported, std::string("dtype ") + dtype_name(s->dtype()) + " is not supported");
    }
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Range(const graph::Node&, int64_t) { return std::unique_ptr<Op>(new RangeOp()); }

}  // namespace glassbox::ops
