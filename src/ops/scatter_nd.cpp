// ScatterND (opset 11; reduction add/mul from 16): out = data with the slices
// addressed by index tuples replaced by (or combined with) updates. Indices in
// [-dim, dim-1]; others are errors naming the index.
#include <cstring>

#include "kernels/gather_scatter.h"
#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

enum class Reduction { kNone, kAdd, kMul };

struct ScatterNDAttrs {
  Reduction reduction = Reduction::kNone;  // "none" | "add" | "mul" (opset 16)
};

class ScatterNDOp final : public Op {
 public:
  explicit ScatterNDOp(ScatterNDAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_ASSIGN_OR_RETURN(const Tensor* it, nn::need_input(ctx, 1, "indices"));
    GB_ASSIGN_OR_RETURN(const Tensor* up, nn::need_input(ctx, 2, "updates"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank(), q = it->rank();
    if (q < 1) return nn::node_error(ctx, ErrorCode::kInvalidArgument, "indices must have rank >= 1");
    const int64_t k = it->shape()[q - 1];
    if (k < 1 || k > r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument, "indices last dim must lie in [1, rank(data)]");
    Shape want(it->shape().begin(), it->shape().end() - 1);
    int64_t slice = 1;
    for (int64_t d = k; d < r; ++d) {
      want.push_back(x->shape()[d]);
      slice *= x->shape()[d];
    }
    if (up->shape() != want || up->dtype() != x->dtype())
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "updates " + shape_to_string(up->shape()) + " must have shape " + shape_to_string(want) +
                                " and the dtype of data");
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> idx, nn::read_ints(ctx, *it, "indices"));
    const int64_t tuples = static_cast<int64_t>(idx.size()) / k;
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    std::vector<int64_t> stride(static_cast<size_t>(k));
    int64_t s = 1;
    for (int64_t i = k - 1; i >= 0; --i) {
      stride[i] = s;
      s *= x->shape()[i];
    }
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t i = 0; i < k; ++i) {
        int64_t v = idx[t * k + i];
        const int64_t n = x->shape()[i];
        if (v < -n || v >= n)
          return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                                "index " + std::to_string(v) + " (indices element " + std::to_string(t * k + i) +
                                    ") is out of range for data dim " + std::to_string(i) + " of size " +
                                    std::to_string(n));
        if (v < 0) v += n;
        off += v * stride[i];
      }
      offsets[t] = off;
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->nbytes()) std::memcpy(y->mutable_raw(), x->raw(), x->nbytes());
    if (a_.reduction == Reduction::kNone) {
      kernels::scatter_slices(static_cast<size_t>(slice) * dtype_size(x->dtype()), tuples, offsets.data(), up->raw(),
                              y->mutable_raw());
      return Status::ok_status();
    }
    const bool add = a_.reduction == Reduction::kAdd;
    return dispatch_dtype<NumericTypes>(x->dtype(), "ScatterND", [&]<class T>() -> Status {
      T* out = y->mutable_data<T>();
      const T* u = up->data<T>();
      for (int64_t t = 0; t < tuples; ++t)
        for (int64_t e = 0; e < slice; ++e) {
          T& o = out[offsets[t] * slice + e];
          o = add ? T(o + u[t * slice + e]) : T(o * u[t * slice + e]);
        }
      return Status::ok_status();
    });
  }

 private:
  ScatterNDAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ScatterND(const graph::Node& node, int64_t) {
  ScatterNDAttrs a;
  GB_ASSIGN_OR_RETURN(std::string red, attr_string(node, "reduction", "none"));
  if (red == "none") a.reduction = Reduction::kNone;
  else if (red == "add") a.reduction = Reduction::kAdd;
  else if (red == "mul") a.reduction = Reduction::kMul;
  else return make_error(ErrorCode::kUnsupported, "reduction '" + red + "' is not supported (none, add, mul)");
  return std::unique_ptr<Op>(new ScatterNDOp(a));
}

}  // namespace glassbox::ops
