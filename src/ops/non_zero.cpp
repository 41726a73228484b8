// NonZero: indices of the nonzero elements, int64 [rank, count], row-major order.
#include <cmath>
#include <cstring>

#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

// Zero test per dtype: floats compare by value (so -0.0 is zero), integers and bool by bytes.
bool is_nonzero(DataType dt, const unsigned char* p, size_t es) {
  switch (dt) {
    case DataType::kFloat32: { float v; std::memcpy(&v, p, 4); return v != 0.f; }
    case DataType::kFloat64: { double v; std::memcpy(&v, p, 8); return v != 0.0; }
    case DataType::kFloat16:
    case DataType::kBFloat16: { uint16_t v; std::memcpy(&v, p, 2); return (v & 0x7fff) != 0; }
    default:
      for (size_t i = 0; i < es; ++i)
        if (p[i]) return true;
      return false;
  }
}

class NonZeroOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const size_t es = dtype_size(x->dtype());
    const auto* p = static_cast<const unsigned char*>(x->raw());
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < x->numel(); ++i)
      if (is_nonzero(x->dtype(), p + i * es, es)) hits.push_back(i);
    const int64_t r = x->rank(), n = static_cast<int64_t>(hits.size());
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, DataType::kInt64, {r, n}));
    int64_t* out = y->mutable_data<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      int64_t rem = hits[j];
      for (int64_t d = r - 1; d >= 0; --d) {
        out[d * n + j] = rem % x->shape()[d];
        rem /= x->shape()[d];
      }
    }
    return Status::ok_status();
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_NonZero(const graph::Node&, int64_t) { return std::unique_ptr<Op>(new NonZeroOp()); }

}  // namespace glassbox::ops
