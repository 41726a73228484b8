// Imputer (ai.onnx.ml 1-3): replaces `replaced_value` (NaN for floats when the attribute
// is NaN, the spec's usual export) by the imputed value of the column. X [N, C] or [C],
// float32 (imputed_value_floats, replaced_value_float) or int64 (imputed_value_int64s,
// replaced_value_int64); imputed values: one for all columns or one per column.
#include <cmath>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct ImputerAttrs {
  std::vector<float> imputed_floats;   // imputed_value_floats (float inputs)
  std::vector<int64_t> imputed_ints;   // imputed_value_int64s (int64 inputs)
  float replaced_float = 0.f;          // replaced_value_float (default 0; NaN matches NaN)
  int64_t replaced_int = 0;            // replaced_value_int64 (default 0)
};

class ImputerOp final : public Op {
 public:
  explicit ImputerOp(ImputerAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->rank() < 1) return op_error(ctx, ErrorCode::kInvalidArgument, "X must have rank >= 1");
    const int64_t cols = x->shape().back();
    const bool is_float = x->dtype() == DataType::kFloat32;
    if (!is_float && x->dtype() != DataType::kInt64)
      return op_error(ctx, ErrorCode::kUnsupported, std::string("X has dtype ") + dtype_name(x->dtype()) +
                                                        "; Imputer supports float32 and int64");
    const size_t n_imputed = is_float ? a_.imputed_floats.size() : a_.imputed_ints.size();
    if (n_imputed == 0)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("X is ") + dtype_name(x->dtype()) + " but imputed_value_" +
                          (is_float ? "floats" : "int64s") + " is empty");
    if (n_imputed != 1 && static_cast<int64_t>(n_imputed) != cols)
      return op_error(ctx, ErrorCode::kInvalidArgument, "imputed values: " + std::to_string(n_imputed) +
                                                            " entries for " + std::to_string(cols) + " columns");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    const int64_t n = x->numel();
    if (is_float) {
      const float* px = x->data<float>();
      float* py = y->mutable_data<float>();
      const bool nan = std::isnan(a_.replaced_float);
      for (int64_t i = 0; i < n; ++i) {
        const bool hit = nan ? std::isnan(px[i]) : px[i] == a_.replaced_float;
        py[i] = hit ? a_.imputed_floats[n_imputed == 1 ? 0 : i % cols] : px[i];
      }
    } else {
      const int64_t* px = x->data<int64_t>();
      int64_t* py = y->mutable_data<int64_t>();
      for (int64_t i = 0; i < n; ++i)
        py[i] = px[i] == a_.replaced_int ? a_.imputed_ints[n_imputed == 1 ? 0 : i % cols] : px[i];
    }
    return {};
  }

 private:
  ImputerAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_Imputer(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"imputed_value_floats", "imputed_value_int64s", "replaced_value_float",
                                              "replaced_value_int64"}));
  ImputerAttrs a;
  GB_ASSIGN_OR_RETURN(a.imputed_floats, ml::attr_floats_or_empty(node, "imputed_value_floats"));
  GB_ASSIGN_OR_RETURN(a.imputed_ints, ml::attr_ints_or_empty(node, "imputed_value_int64s"));
  GB_ASSIGN_OR_RETURN(a.replaced_float, attr_float(node, "replaced_value_float", a.replaced_float));
  GB_ASSIGN_OR_RETURN(a.replaced_int, attr_int(node, "replaced_value_int64", a.replaced_int));
  if (a.imputed_floats.empty() == a.imputed_ints.empty())
    return ml::bad_attr("exactly one of imputed_value_floats and imputed_value_int64s must be given");
  return std::unique_ptr<Op>(new ImputerOp(std::move(a)));
}

}  // namespace glassbox::ops
