// Binarizer (ai.onnx.ml 1-3): Y = X > threshold ? 1 : 0, same dtype and shape as X
// (float32, float64, int64, int32). NaN is not > anything: 0.
#include "ops/dtype_dispatch.h"
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct BinarizerAttrs {
  float threshold = 0.f;  // values strictly greater map to 1
};

class BinarizerOp final : public Op {
 public:
  explicit BinarizerOp(BinarizerAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    return dispatch_dtype<TypeList<float, double, int64_t, int32_t>>(x->dtype(), "Binarizer", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      const T* px = x->data<T>();
      T* py = y->mutable_data<T>();
      // The threshold is compared in the input's type (as a float attribute it is exact in double).
      const auto t = static_cast<std::conditional_t<std::is_integral_v<T>, double, T>>(a_.threshold);
      for (int64_t i = 0; i < x->numel(); ++i) py[i] = px[i] > t ? T(1) : T(0);
      return {};
    });
  }

 private:
  BinarizerAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_Binarizer(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"threshold"}));
  BinarizerAttrs a;
  GB_ASSIGN_OR_RETURN(a.threshold, attr_float(node, "threshold", a.threshold));
  return std::unique_ptr<Op>(new BinarizerOp(a));
}

}  // namespace glassbox::ops
