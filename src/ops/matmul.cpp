// MatMul: numpy matmul semantics. Rank-1 operands are promoted ([K] -> [1, K]
// for A, [K, 1] for B) and the promoted dim removed from the output; batch dims
// broadcast. float32 on oneDNN (kernels/gemm.h); float64/int32/int64/uint32/uint64 on plain loops.
// Layouts: B without batch (linear layers) folds A's batch into M: one GEMM.
// Equal batches: one batched GEMM. Otherwise one GEMM per output matrix.
#include <algorithm>
#include <vector>

#include "kernels/gemm.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"
#include "ops/packed_weights.h"

namespace glassbox::ops {
namespace {

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

class MatMulOp final : public Op {
 public:
  std::string precision_decision(Precision precision, const std::vector<const Tensor*>& constants) const override {
    return constants.size() < 2 ? std::string() : packed_precision_decision(precision, constants[1], false);
  }
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    if (a->dtype() != b->dtype())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("MatMul inputs differ in dtype: ") + dtype_name(a->dtype()) + " x " +
                          dtype_name(b->dtype()));
    using Types = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>;
    return dispatch_dtype<Types>(a->dtype(), "MatMul", [&]<class T>() -> Status { return run<T>(ctx, *a, *b); });
  }

 private:
  template <class T>
  Status run(ComputeContext& ctx, const Tensor& at, const Tensor& bt) const {
    const Tensor* a = &at;
    const Tensor* b = &bt;
    if (a->rank() == 0 || b->rank() == 0)
      return op_error(ctx, ErrorCode::kInvalidArgument, "MatMul inputs must have rank >= 1");
    Shape sa = a->shape(), sb = b->shape();
    const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    if (sb[sb.size() - 2] != K)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "MatMul inner dimensions differ: A " + shape_to_string(a->shape()) + " x B " +
                          shape_to_string(b->shape()));
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    GB_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(batch_a, batch_b));
    Shape out_shape = batch;
    if (!a_vec) out_shape.push_back(M);
    if (!b_vec) out_shape.push_back(N);
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->dtype(), out_shape));
    const int64_t nb = product(batch, 0, batch.size());
    const int64_t nba = product(batch_a, 0, batch_a.size()), nbb = product(batch_b, 0, batch_b.size());
    const T* pa = a->data<T>();
    T* py = y->mutable_data<T>();
    ThreadPool* pool = &ctx.pool();
    // float32 on oneDNN; other dtypes (rare in models) on plain loops.
    auto gemm = [pool](const kernels::GemmDesc& g, const T* x, const T* w, T* out) {
      if constexpr (std::is_same_v<T, float>) kernels::gemm_f32(g, x, w, out, pool);
      else kernels::gemm_naive<T>(g, x, w, out);
    };
    // Linear layer with constant float32 weights: packed once, tiles on the pool; in
    // bfloat16 when the session's precision says so (fp32 accumulation and output).
    if constexpr (std::is_same_v<T, float>) {
      if (b->rank() == 2 && ctx.input_is_constant(1) && K > 0 && N > 0 && nba * M > 0) {
        auto packed = packed_.get(*b, false, *pool, ctx.precision());
        kernels::gemm_f32_packed(nba * M, pa, K, *packed, py, N, {}, pool);
        return {};
      }
    }
    // B's typed data only off the packed path: a misaligned mapped weight gets an aligned resident copy on its first
    // typed access (graph/loader's lazy slices), which the packed path, reading the bytes where they lie, never needs.
    const T* pb = b->data<T>();
    kernels::GemmDesc d;
    d.N = N;
    d.K = K;
    d.lda = K;
    d.ldb = N;
    d.ldc = N;
    if (nbb == 1) {  // shared B: fold batch into rows
      d.M = nba * M;
      gemm(d, pa, pb, py);
      return {};
    }
    d.M = M;
    if (nba == nb && nbb == nb) {
      d.batch = nb;
      d.stride_a = M * K;
      d.stride_b = K * N;
      d.stride_c = M * N;
      gemm(d, pa, pb, py);
      return {};
    }
    // General broadcast: map each output batch index to A's and B's.
    const size_t r = batch.size();
    const Shape ba = padded(batch_a, r), bb = padded(batch_b, r);
    std::vector<int64_t> idx(r, 0);
    for (int64_t n = 0; n < nb; ++n) {
      int64_t oa = 0, ob = 0;
      for (size_t i = 0; i < r; ++i) {
        oa = oa * ba[i] + (ba[i] == 1 ? 0 : idx[i]);
        ob = ob * bb[i] + (bb[i] == 1 ? 0 : idx[i]);
      }
      gemm(d, pa + oa * M * K, pb + ob * K * N, py + n * M * N);
      for (size_t i = r; i-- > 0;) {
        if (++idx[i] < batch[i]) break;
        idx[i] = 0;
      }
    }
    return {};
  }

  PackedWeightsSlot packed_;

  static Shape padded(const Shape& s, size_t rank) {
    Shape p(rank - s.size(), 1);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_MatMul(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new MatMulOp());
}

}  // namespace glassbox::ops
