// EyeLike (opset 9): a 2-D tensor of the input's shape with ones on the diagonal
// shifted by k (k > 0: above the main diagonal) and zeros elsewhere. The dtype
// is the `dtype` attribute, or the input's.
#include <cstring>

#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct EyeLikeAttrs {
  int64_t dtype = 0;  // TensorProto data type of the output; 0 (absent) = the input's
  int64_t k = 0;      // diagonal offset: 0 main, > 0 upper, < 0 lower
};

class EyeLikeOp final : public Op {
 public:
  explicit EyeLikeOp(EyeLikeAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    if (x->rank() != 2)
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "input " + shape_to_string(x->shape()) + " must be 2-D");
    const DataType dt = a_.dtype ? static_cast<DataType>(a_.dtype) : x->dtype();
    return dispatch_dtype<AllTypes>(dt, "EyeLike", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
      const int64_t rows = x->shape()[0], cols = x->shape()[1];
      if (y->nbytes()) std::memset(y->mutable_raw(), 0, y->nbytes());
      T* py = y->mutable_data<T>();
      T one{};
      if constexpr (std::is_same_v<T, Float16>) one = kernels::float_to_half(1.f);
      else if constexpr (std::is_same_v<T, BFloat16>) one = kernels::float_to_bfloat16(1.f);
      else one = static_cast<T>(1);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + a_.k;
        if (j >= 0 && j < cols) py[i * cols + j] = one;
      }
      return Status::ok_status();
    });
  }

 private:
  EyeLikeAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_EyeLike(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"dtype", "k"}));
  EyeLikeAttrs a;
  GB_ASSIGN_OR_RETURN(a.dtype, attr_int(node, "dtype", 0));
  GB_ASSIGN_OR_RETURN(a.k, attr_int(node, "k", 0));
  if (a.dtype != 0 && !(a.dtype >= 0 && a.dtype <= INT32_MAX && dtype_in(static_cast<DataType>(a.dtype), AllTypes{})))
    return unsupported_attr("dtype", "data type " + std::to_string(a.dtype) + " is not supported");
  return std::unique_ptr<Op>(new EyeLikeOp(a));
}

}  // namespace glassbox::ops
