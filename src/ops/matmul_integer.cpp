// MatMulInteger (opset 10): int32 Y = (A - a_zero_point) * (B - b_zero_point)
// for uint8/int8 A and B. Zero points: scalars, or per-row of A ([M]) /
// per-column of B ([N]). A and B are 2-D, or batched with equal batch dims or
// a 2-D B. uint8 A x constant int8 B runs on the packed oneDNN u8 x s8 path
// (exact int32, see kernels/gemm_int8.h); everything else on plain loops.
// qmatmul_shape / qmatmul_run are shared with MatMulIntegerToFloat (qmatmul.h).
#include <algorithm>
#include <vector>

#include "kernels/gemm_int8.h"
#include "kernels/layer_norm.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/qmatmul.h"

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
    GB_ASSIGN_OR_RETURN(Shape out_shape, qmatmul_shape(ctx, *a, *b));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, out_shape));
    QMatMulOut out;
    out.s32 = y->mutable_data<int32_t>();
    return qmatmul_run(ctx, *a, *b, ctx.input(2), ctx.input(3), packed_, out);
  }

 private:
  PackedWeightsS8Slot packed_;
};

}  // namespace

Result<Shape> qmatmul_shape(const ComputeContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.rank() < 2 || b.rank() < 2)
    return op_error(ctx, ErrorCode::kUnsupported, "MatMulInteger: 1-D operands are not implemented");
  const int64_t K = a.shape().back(), N = b.shape().back();
  if (b.shape()[b.rank() - 2] != K)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    "inner dimensions differ: " + shape_to_string(a.shape()) + " x " + shape_to_string(b.shape()));
  if (b.rank() != 2 && !std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin(), b.shape().end() - 2))
    return op_error(ctx, ErrorCode::kUnsupported, "MatMulInteger: batch broadcasting is not implemented");
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.push_back(N);
  return out_shape;
}

Status qmatmul_run(ComputeContext& ctx, const Tensor& a, const Tensor& b, const Tensor* a_zp, const Tensor* b_zp,
                   const PackedWeightsS8Slot& slot, const QMatMulOut& out) {
  const int64_t M = a.shape()[a.rank() - 2], K = a.shape().back(), N = b.shape().back();
  int64_t nba = 1;
  for (int64_t d = 0; d + 2 < a.rank(); ++d) nba *= a.shape()[d];
  const bool b_shared = b.rank() == 2;
  using Types = TypeList<uint8_t, int8_t>;
  return dispatch_dtype<Types>(a.dtype(), "MatMulInteger A", [&]<class TA>() -> Status {
    return dispatch_dtype<Types>(b.dtype(), "MatMulInteger B", [&]<class TB>() -> Status {
      GB_ASSIGN_OR_RETURN(auto za, zero_points<TA>(ctx, a_zp, M, "a_zero_point"));
      GB_ASSIGN_OR_RETURN(auto zb, zero_points<TB>(ctx, b_zp, N, "b_zero_point"));
      const TA* pa = a.data<TA>();
      const int64_t rows = nba * M;
      if (rows == 0 || N == 0) return Status::ok_status();
      if constexpr (std::is_same_v<TA, uint8_t> && std::is_same_v<TB, int8_t>) {
        if (b_shared && K > 0 && ctx.input_is_constant(1)) {
          auto packed = slot.get(b, ctx.pool());
          std::vector<int32_t> za_rows;  // per-row zero points repeat for each batch matrix
          const bool za_scalar = !a_zp || a_zp->numel() == 1;
          if (!za_scalar)
            for (int64_t r = 0; r < rows; ++r) za_rows.push_back(za[r % M]);
          kernels::QGemmArgs q;
          q.M = rows;
          q.A = pa;
          q.lda = K;
          q.a_zp = za_scalar ? za.data() : za_rows.data();
          q.a_zp_per_row = !za_scalar;
          q.b_zp = zb.data();
          q.C_s32 = out.s32;
          q.C_f32 = out.f32;
          q.ldc = N;
          q.scale = out.scale;
          q.bias = out.bias;
          q.activation = out.activation;
          q.residual = out.residual;
          q.ld_residual = N;
          kernels::gemm_u8s8_packed(q, *packed, &ctx.pool());
          return Status::ok_status();
        }
      }
      const TB* pb = b.data<TB>();  // only here: the packed path reads B once, through its packing
      std::vector<int32_t> tmp;
      int32_t* acc = out.s32;
      if (!acc) {
        tmp.resize(static_cast<size_t>(rows * N));
        acc = tmp.data();
      }
      ctx.pool().parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, K * N)),
                              [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t batch = r / M, i = r % M;
          const TB* bm = pb + (b_shared ? 0 : batch * K * N);
          kernels::gemm_integer_reference<TA, TB>(1, N, K, pa + r * K, K, za.data() + i, false, bm, N, zb.data(), true,
                                                  acc + r * N, N);
          if (!out.f32) continue;
          float* y = out.f32 + r * N;
          kernels::apply_qgemm_scale(1, N, acc + r * N, N, out.scale, out.bias, y, N);
          if (out.activation == kernels::GemmActivation::kGeluErf) kernels::gelu_erf_f32(y, y, N, nullptr);
          if (out.residual)
            for (int64_t j = 0; j < N; ++j) y[j] += out.residual[r * N + j];
        }
      });
      return Status::ok_status();
    });
  });
}

Result<std::unique_ptr<Op>> create_MatMulInteger(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new MatMulIntegerOp());
}

}  // namespace glassbox::ops
