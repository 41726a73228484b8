// DFT (opset 17): input [batch, signal dims..., 1 (real) | 2 (complex)] ->
// [..., n or n/2+1 along `axis`, ..., 2]. dft_length zero-pads or truncates the
// signal along the axis; onesided keeps the first n/2+1 bins (forward only);
// inverse scales by 1/n. float32/float64, computed in double
// (kernel: src/kernels/dft.cpp).
#include <algorithm>

#include "kernels/dft.h"
#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct DftAttrs {
  int64_t axis = 1;      // signal axis (1 = first dim after the batch)
  int64_t inverse = 0;   // 1: inverse transform
  int64_t onesided = 0;  // 1: only the non-redundant half (n/2 + 1 bins)
};

class DftOp final : public Op {
 public:
  explicit DftOp(DftAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    const int64_t r = x->rank();
    if (r < 2 || (x->shape()[r - 1] != 1 && x->shape()[r - 1] != 2))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "input must be [batch, signal dims..., 1 or 2], got " + shape_to_string(x->shape()));
    GB_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a_.axis, r));
    if (axis == r - 1)
      return op_error(ctx, ErrorCode::kInvalidArgument, "axis must not be the last (real/imaginary) dim");
    const int64_t n_in = x->shape()[axis];
    int64_t n = n_in;
    if (const Tensor* len = ctx.input(1); len && len->defined()) {
      GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*len, "dft_length"));
      if (v.size() != 1 || v[0] < 1)
        return op_error(ctx, ErrorCode::kInvalidArgument, "dft_length must be one positive value");
      n = v[0];
    }
    const int64_t bins = a_.onesided ? n / 2 + 1 : n;
    Shape out_shape = x->shape();
    out_shape[axis] = bins;
    out_shape[r - 1] = 2;
    const int64_t comps = x->shape()[r - 1];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape()[d];
    for (int64_t d = axis + 1; d < r - 1; ++d) inner *= x->shape()[d];
    return dispatch_dtype<FloatTypes>(x->dtype(), "DFT", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
      GB_ASSIGN_OR_RETURN(Tensor work, ctx.allocate_scratch(DataType::kFloat64, Shape{4 * n}));
      if (outer * inner == 0) return {};
      const kernels::DftPlan plan(n, a_.inverse != 0);
      const T* px = x->data<T>();
      T* py = y->mutable_data<T>();
      double* in = work.mutable_data<double>();
      double* out = in + 2 * n;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          std::fill(in, in + 2 * n, 0.0);
          for (int64_t j = 0; j < std::min(n, n_in); ++j) {
            const T* v = px + ((o * n_in + j) * inner + i) * comps;
            in[2 * j] = static_cast<double>(v[0]);
            if (comps == 2) in[2 * j + 1] = static_cast<double>(v[1]);
          }
          plan.run(in, out);
          for (int64_t k = 0; k < bins; ++k) {
            T* dst = py + ((o * bins + k) * inner + i) * 2;
            dst[0] = static_cast<T>(out[2 * k]);
            dst[1] = static_cast<T>(out[2 * k + 1]);
          }
        }
      return {};
    });
  }

 private:
  DftAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_DFT(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axis", "inverse", "onesided"}));
  DftAttrs a;
  GB_ASSIGN_OR_RETURN(a.axis, attr_int(node, "axis", a.axis));
  GB_ASSIGN_OR_RETURN(a.inverse, attr_int(node, "inverse", a.inverse));
  GB_ASSIGN_OR_RETURN(a.onesided, attr_int(node, "onesided", a.onesided));
  if (a.inverse != 0 && a.inverse != 1) return unsupported_attr("inverse", "must be 0 or 1");
  if (a.onesided != 0 && a.onesided != 1) return unsupported_attr("onesided", "must be 0 or 1");
  if (a.inverse && a.onesided)
    return unsupported_attr("onesided", "an inverse one-sided DFT (complex-to-real) is not supported");
  return std::unique_ptr<Op>(new DftOp(a));
}

}  // namespace glassbox::ops
