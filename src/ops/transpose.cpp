// Transpose: permutes dims (default: reversed).
#include <numeric>

#include "kernels/data_movement.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct TransposeAttrs {
  bool has_perm = false;
  std::vector<int64_t> perm;  // output dim i = input dim perm[i]; default reverse
};

class TransposeOp final : public Op {
 public:
  explicit TransposeOp(TransposeAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "data"));
    GB_RETURN_IF_ERROR(nn::check_movable(ctx, *x));
    const int64_t r = x->rank();
    std::vector<int64_t> perm = a_.perm;
    if (!a_.has_perm) {
      perm.resize(static_cast<size_t>(r));
      for (int64_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    if (static_cast<int64_t>(perm.size()) != r)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "perm has " + std::to_string(perm.size()) + " entries for input rank " +
                                std::to_string(r));
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= r || seen[p])
        return nn::node_error(ctx, ErrorCode::kInvalidArgument, "perm is not a permutation of [0, rank)");
      seen[p] = true;
    }
    std::vector<int64_t> in_strides(static_cast<size_t>(r));
    int64_t s = 1;
    for (int64_t d = r - 1; d >= 0; --d) {
      in_strides[d] = s;
      s *= x->shape()[d];
    }
    Shape out(static_cast<size_t>(r));
    std::vector<int64_t> strides(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) {
      out[i] = x->shape()[perm[i]];
      strides[i] = in_strides[perm[i]];
    }
    GB_ASSIGN_OR_RETURN(Tensor* y, ctx.allocate_output(0, x->dtype(), out));
    kernels::strided_copy(dtype_size(x->dtype()), static_cast<int>(r), out.data(), x->raw(), strides.data(),
                          y->mutable_raw(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  TransposeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_Transpose(const graph::Node& node, int64_t) {
  TransposeAttrs a;
  a.has_perm = nn::has_attr(node, "perm");
  GB_ASSIGN_OR_RETURN(a.perm, nn::attr_ints_or(node, "perm"));
  return std::unique_ptr<Op>(new TransposeOp(std::move(a)));
}

}  // namespace glassbox::ops
