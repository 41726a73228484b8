// MatMulInteger (opset 10): int32 Y = (A - a_zero_point) * (B - b_zero_point)
// for uint8/int8 A and B. Zero points: scalars, or per-row of A ([M]) /
// per-column of B ([N]). A and B are 2-D, or batched with equal batch dims or
// a 2-D B. Plain loops (int32 accumulation is exact here).
#include <algorithm>
#include <vector>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

template <class T>
Result<std::vector<int32_t>> zero_points(const ComputeContext& ctx, const Tensor* zp, int64_t n, const char* what) {
  std::vector<int32_t> v(static_cast<size_t>(n), 0);
  if (!zp || !zp->defined()) return v;
  if (zp->dtype() != dtype_of<T>())
    return op_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must have its matrix's dtype");
  if (zp->numel() == 1) {
    std::fill(v.begin(), v.end(), static_cast<int32_t>(zp->data<T>()[0]));
  } else if (zp->numel() == n) {
    for (int64_t i = 0; i < n; ++i) v[i] = zp->data<T>()[i];
  } else {
    return op_error(ctx, ErrorCode::kUnsupported,
                    std::string(what) + " of shape " + shape_to_string(zp->shape()) + " is not supported");
  }
  return v;
}

class MatMulIntegerOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    if (a->rank() < 2 || b->rank() < 2)
      return op_error(ctx, ErrorCode::kUnsupported, "MatMulInteger: 1-D operands are not implemented");
    const int64_t M = a->shape()[a->rank() - 2], K = a->shape().back(), N = b->shape().back();
    if (b->shape()[b->rank() - 2] != K)
      return op_error(ctx, ErrorCode::kInvalidArgument, "inner dimensions differ: " + shape_to_string(a->shape()) +
                                                            " x " + shape_to_string(b->shape()));
    int64_t nba = 1;
    for (int64_t d = 0; d + 2 < a->rank(); ++d) nba *= a->shape()[d];
    const bool b_shared = b->rank() == 2;
    Shape out_shape(a->shape().begin(), a->shape().end() - 1);
    out_shape.push_back(N);
    if (!b_shared && !std::equal(a->shape().begin(), a->shape().end() - 2, b->shape().begin(), b->shape().end() - 2))
      return op_error(ctx, ErrorCode::kUnsupported, "MatMulInteger: batch broadcasting is not implemented");
    using Types = TypeList<uint8_t, int8_t>;
    return dispatch_dtype<Types>(a->dtype(), "MatMulInteger A", [&]<class TA>() -> Status {
      return dispatch_dtype<Types>(b->dtype(), "MatMulInteger B", [&]<class TB>() -> Status {
        GB_ASSIGN_OR_RETURN(auto za, zero_points<TA>(ctx, ctx.input(2), M, "a_zero_point"));
        GB_ASSIGN_OR_RETURN(auto zb, zero_points<TB>(ctx, ctx.input(3), N, "b_zero_point"));
        GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, out_shape));
        const TA* pa = a->data<TA>();
        const TB* pb = b->data<TB>();
        int32_t* py = y->mutable_data<int32_t>();
        ctx.pool().parallel_for(nba * M, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, K * N)),
                                [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t batch = r / M, i = r % M;
            const TA* arow = pa + r * K;
            const TB* bm = pb + (b_shared ? 0 : batch * K * N);
            int32_t* yrow = py + r * N;
            for (int64_t j = 0; j < N; ++j) yrow[j] = 0;
            for (int64_t k = 0; k < K; ++k) {
              const int32_t av = static_cast<int32_t>(arow[k]) - za[i];
              const TB* brow = bm + k * N;
              for (int64_t j = 0; j < N; ++j) yrow[j] += av * (static_cast<int32_t>(brow[j]) - zb[j]);
            }
          }
        });
        return {};
      });
    });
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_MatMulInteger(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new MatMulIntegerOp());
}

}  // namespace glassbox::ops
