// OneHotEncoder (ai.onnx.ml 1-3): X (int64, int32, float32, float64; values compared as
// int64) of shape S -> Y float32 of shape S + [len(cats_int64s)], 1 at the category's
// position. A value outside the categories gives all zeros when zeros = 1, else a
// run-time error. String categories are refused (no string tensors).
#include <cmath>
#include <unordered_map>

#include "ops/dtype_dispatch.h"
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct OneHotEncoderAttrs {
  std::vector<int64_t> cats;  // cats_int64s: the categories, in output order (required)
  int64_t zeros = 1;          // 1: unknown values encode as all zeros; 0: they are an error
};

class OneHotEncoderOp final : public Op {
 public:
  explicit OneHotEncoderOp(OneHotEncoderAttrs a) : a_(std::move(a)) {
    for (size_t i = 0; i < a_.cats.size(); ++i) index_.emplace(a_.cats[i], static_cast<int64_t>(i));
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    const int64_t k = static_cast<int64_t>(a_.cats.size());
    Shape shape = x->shape();
    shape.push_back(k);
    return dispatch_dtype<TypeList<int64_t, int32_t, float, double>>(x->dtype(), "OneHotEncoder", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, shape));
      float* py = y->mutable_data<float>();
      std::fill(py, py + y->numel(), 0.f);
      const T* px = x->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        // A float outside int64's range (or NaN) is no category; casting it would be undefined.
        const double d = static_cast<double>(px[i]);
        auto it = std::is_floating_point_v<T> && !(std::fabs(d) < 9.2e18) ? index_.end()
                                                                          : index_.find(static_cast<int64_t>(px[i]));
        if (it != index_.end()) {
          py[i * k + it->second] = 1.f;
        } else if (a_.zeros == 0) {
          return op_error(ctx, ErrorCode::kInvalidArgument,
                          "value " + std::to_string(static_cast<double>(px[i])) + " at " + std::to_string(i) +
                              " is not a category and zeros = 0");
        }
      }
      return {};
    });
  }

 private:
  OneHotEncoderAttrs a_;
  std::unordered_map<int64_t, int64_t> index_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_OneHotEncoder(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"cats_int64s", "cats_strings", "zeros"}));
  GB_RETURN_IF_ERROR(ml::refuse_present(node, {"cats_strings"}, "string categories need string tensors, which glassbox does not have"));
  OneHotEncoderAttrs a;
  GB_ASSIGN_OR_RETURN(a.cats, ml::attr_ints_or_empty(node, "cats_int64s"));
  GB_ASSIGN_OR_RETURN(a.zeros, attr_int(node, "zeros", a.zeros));
  if (a.cats.empty()) return ml::bad_attr("cats_int64s is empty");
  if (a.zeros != 0 && a.zeros != 1) return ml::bad_attr("zeros must be 0 or 1, got " + std::to_string(a.zeros));
  std::unordered_map<int64_t, int> seen;
  for (int64_t c : a.cats)
    if (seen[c]++) return ml::bad_attr("cats_int64s lists category " + std::to_string(c) + " twice");
  return std::unique_ptr<Op>(new OneHotEncoderOp(std::move(a)));
}

}  // namespace glassbox::ops
