// OneHotEncoder (ai.onnx.ml 1-3): X (int64, int32, float32, float64; values compared as
// int64) of shape S -> Y float32 of shape S + [len(cats_int64s)], 1 at the category's
// position. A value outside the categories gives all zeros when zeros = 1, else a
// run-time error. With cats_strings, X is a string tensor and strings are compared exactly
// (bytes); Y is S + [len(cats_strings)].
#include <cmath>
#include <unordered_map>

#include "ops/dtype_dispatch.h"
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct OneHotEncoderAttrs {
  std::vector<int64_t> cats;  // cats_int64s: the categories, in output order (this or cats_strings)
  std::vector<std::string> cat_strings;  // cats_strings: string categories (X a string tensor)
  int64_t zeros = 1;          // 1: unknown values encode as all zeros; 0: they are an error
};

class OneHotEncoderOp final : public Op {
 public:
  explicit OneHotEncoderOp(OneHotEncoderAttrs a) : a_(std::move(a)) {
    for (size_t i = 0; i < a_.cats.size(); ++i) index_.emplace(a_.cats[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < a_.cat_strings.size(); ++i) string_index_.emplace(a_.cat_strings[i], static_cast<int64_t>(i));
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    const bool strings = !a_.cat_strings.empty();
    if (strings != (x->dtype() == DataType::kString))
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("X has dtype ") + dtype_name(x->dtype()) + " but the categories are " +
                          (strings ? "strings (cats_strings)" : "integers (cats_int64s)"));
    const int64_t k = static_cast<int64_t>(strings ? a_.cat_strings.size() : a_.cats.size());
    Shape shape = x->shape();
    shape.push_back(k);
    if (strings) return encode_strings(ctx, *x, shape, k);
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
  Status encode_strings(ComputeContext& ctx, const Tensor& x, const Shape& shape, int64_t k) const {
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, shape));
    float* py = y->mutable_data<float>();
    std::fill(py, py + y->numel(), 0.f);
    const std::string* px = x.string_data();
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto it = string_index_.find(px[i]);
      if (it != string_index_.end()) py[i * k + it->second] = 1.f;
      else if (a_.zeros == 0)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "string '" + px[i].substr(0, 64) + "' at " + std::to_string(i) + " is not a category and zeros = 0");
    }
    return {};
  }

  OneHotEncoderAttrs a_;
  std::unordered_map<int64_t, int64_t> index_;
  std::unordered_map<std::string, int64_t> string_index_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_OneHotEncoder(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"cats_int64s", "cats_strings", "zeros"}));
  OneHotEncoderAttrs a;
  GB_ASSIGN_OR_RETURN(a.cats, ml::attr_ints_or_empty(node, "cats_int64s"));
  GB_ASSIGN_OR_RETURN(a.zeros, attr_int(node, "zeros", a.zeros));
  GB_ASSIGN_OR_RETURN(a.cat_strings, ml::attr_strings(node, "cats_strings"));
  if (a.cats.empty() == a.cat_strings.empty())
    return ml::bad_attr("exactly one of cats_int64s and cats_strings must be given (non-empty); got " +
                        std::to_string(a.cats.size()) + " and " + std::to_string(a.cat_strings.size()));
  if (a.zeros != 0 && a.zeros != 1) return ml::bad_attr("zeros must be 0 or 1, got " + std::to_string(a.zeros));
  std::unordered_map<int64_t, int> seen;
  for (int64_t c : a.cats)
    if (seen[c]++) return ml::bad_attr("cats_int64s lists category " + std::to_string(c) + " twice");
  std::unordered_map<std::string, int> seen_strings;
  for (const auto& c : a.cat_strings)
    if (seen_strings[c]++) return ml::bad_attr("cats_strings lists category '" + c.substr(0, 64) + "' twice");
  return std::unique_ptr<Op>(new OneHotEncoderOp(std::move(a)));
}

}  // namespace glassbox::ops
