// GatherND (opset 11; batch_dims from 12): each index tuple (last indices dim)
// selects a slice of data. Indices in [-dim, dim-1]; others are errors naming
// the index.
#include "kernels/gather_scatter.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct GatherNDAttrs {
  int64_t batch_dims = 0;  // leading dims shared by data and indices
};

class GatherNDOp final : public Op {
 public:
  explicit GatherNDOp(GatherNDAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 1, "indices"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank(), q = it->rank(), b = a_.batch_dims;
    if (q < 1 || b < 0 || b >= std::min(q, r))
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "batch_dims " + std::to_string(b) +
                                                                  " must be < min(rank(data), rank(indices))");
    const int64_t k = it->shape()[q - 1];
    if (k < 1 || k > r - b)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "indices last dim " + std::to_string(k) + " must lie in [1, rank(data) - batch_dims = " +
                                std::to_string(r - b) + "]");
    int64_t batches = 1;
    for (int64_t d = 0; d < b; ++d) {
      if (it->shape()[d] != x->shape()[d])
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "batch dims of data and indices differ");
      batches *= x->shape()[d];
    }
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, nn::read_ints(ctx, *it, "indices"));
    Shape out(it->shape().begin(), it->shape().end() - 1);
    int64_t slice = 1;
    for (int64_t d = b + k; d < r; ++d) {
      out.push_back(x->shape()[d]);
      slice *= x->shape()[d];
    }
    int64_t per_batch_slices = 1;  // slices of data inside one batch
    std::vector<int64_t> stride(static_cast<size_t>(k));
    for (int64_t i = k - 1; i >= 0; --i) {
      stride[i] = per_batch_slices;
      per_batch_slices *= x->shape()[b + i];
    }
    const int64_t tuples = static_cast<int64_t>(idx.size()) / k;
    const int64_t tuples_per_batch = batches ? tuples / batches : 0;
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = (tuples_per_batch ? t / tuples_per_batch : 0) * per_batch_slices;
      for (int64_t i = 0; i < k; ++i) {
        int64_t v = idx[t * k + i];
        const int64_t n = x->shape()[b + i];
        if (v < -n || v >= n)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                                "index " + std::to_string(v) + " (indices element " + std::to_string(t * k + i) +
                                    ") is out of range for data dim " + std::to_string(b + i) + " of size " +
                                    std::to_string(n));
        if (v < 0) v += n;
        off += v * stride[i];
      }
      offsets[t] = off;
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    kernels::gather_slices(static_cast<size_t>(slice) * dtype_size(x->dtype()), tuples, offsets.data(), x->raw(),
                           y->mutable_raw());
    return Status::ok_status();
  }

 private:
  GatherNDAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_GatherND(const graph::Node& node, int64_t) {
  GatherNDAttrs a;
  GB_ASSIGN_OR_RETURN(a.batch_dims, attr_int(node, "batch_dims", 0));
  return std::unique_ptr<Op>(new GatherNDOp(a));
}

}  // namespace glassbox::ops
