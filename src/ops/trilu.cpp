// Trilu (opset 14): keeps the upper (upper = 1: j - i >= k) or lower
// (j - i <= k) triangle of the last two dims, zeroing the rest; k is optional input 1.
#include <algorithm>
#include <cstring>

#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct TriluAttrs {
  int64_t upper = 1;  // 1: upper triangle, 0: lower
};

class TriluOp final : public Op {
 public:
  explicit TriluOp(TriluAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    if (x->rank() < 2) return op_error(ctx, ErrorCode::kInvalidArgument, "input must have rank >= 2");
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1); kt && kt->defined()) {
      GB_ASSIGN_OR_RETURN(auto kv, tensor_to_int64s(*kt, "k"));
      if (kv.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, "k must be a scalar");
      k = kv[0];
    }
    const size_t es = dtype_size(x->dtype());
    if (es == 0) return op_error(ctx, ErrorCode::kUnsupported, std::string("dtype ") + dtype_name(x->dtype()));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    const int64_t rows = x->shape()[x->rank() - 2], cols = x->shape().back();
    const int64_t mats = (rows != 0 && cols != 0) ? x->numel() / (rows * cols) : 0;
    const char* src = static_cast<const char*>(x->raw());
    char* dst = static_cast<char*>(y->mutable_raw());
    if (y->nbytes()) std::memset(dst, 0, y->nbytes());
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i) {
        // Keep columns [lo, hi) of row i.
        const int64_t lo = a_.upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t hi = a_.upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        if (hi <= lo) continue;
        const int64_t off = (m * rows + i) * cols + lo;
        std::memcpy(dst + off * es, src + off * es, static_cast<size_t>(hi - lo) * es);
      }
    return {};
  }

 private:
  TriluAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Trilu(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"upper"}));
  TriluAttrs a;
  GB_ASSIGN_OR_RETURN(a.upper, attr_int(node, "upper", a.upper));
  return std::unique_ptr<Op>(new TriluOp(a));
}

}  // namespace glassbox::ops
