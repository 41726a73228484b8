// LabelEncoder (ai.onnx.ml 2-3), numeric keys and values: X int64 or float32 (the keys'
// type) -> Y of the values' type, same shape; keys not found map to the default.
// Float keys compare by value, a NaN key matches NaN. String keys/values are refused
// (no string tensors); ai.onnx.ml 1 (string <-> int64 only) is out of range for that reason.
#include <cmath>
#include <map>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct LabelEncoderAttrs {
  std::vector<int64_t> keys_int64s;    // keys when X is int64
  std::vector<float> keys_floats;      // keys when X is float32
  std::vector<int64_t> values_int64s;  // values when Y is int64
  std::vector<float> values_floats;    // values when Y is float32
  int64_t default_int64 = -1;          // Y for unknown keys (int64 values), spec default
  float default_float = -0.f;          // Y for unknown keys (float values), spec default -0.0
};

class LabelEncoderOp final : public Op {
 public:
  explicit LabelEncoderOp(LabelEncoderAttrs a) : a_(std::move(a)) {
    const size_t n = std::max(a_.keys_int64s.size(), a_.keys_floats.size());
    for (size_t i = 0; i < n; ++i) {
      const double key = float_keys() ? static_cast<double>(a_.keys_floats[i]) : 0.0;
      if (float_keys() && std::isnan(key)) nan_value_ = static_cast<int64_t>(i);
      else if (float_keys()) float_index_.emplace(a_.keys_floats[i], i);
      else int_index_.emplace(a_.keys_int64s[i], i);
    }
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    const DataType want = float_keys() ? DataType::kFloat32 : DataType::kInt64;
    if (x->dtype() != want)
      return op_error(ctx, ErrorCode::kInvalidArgument, std::string("X has dtype ") + dtype_name(x->dtype()) +
                                                            ", the keys are " + dtype_name(want));
    const bool float_values = !a_.values_floats.empty();
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, float_values ? DataType::kFloat32 : DataType::kInt64, x->shape()));
    for (int64_t i = 0; i < x->numel(); ++i) {
      const int64_t at = float_keys() ? find_float(x->data<float>()[i]) : find_int(x->data<int64_t>()[i]);
      if (float_values) y->mutable_data<float>()[i] = at < 0 ? a_.default_float : a_.values_floats[at];
      else y->mutable_data<int64_t>()[i] = at < 0 ? a_.default_int64 : a_.values_int64s[at];
    }
    return {};
  }

 private:
  bool float_keys() const { return !a_.keys_floats.empty(); }
  int64_t find_float(float v) const {
    if (std::isnan(v)) return nan_value_;
    auto it = float_index_.find(v);
    return it == float_index_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  int64_t find_int(int64_t v) const {
    auto it = int_index_.find(v);
    return it == int_index_.end() ? -1 : static_cast<int64_t>(it->second);
  }

  LabelEncoderAttrs a_;
  std::map<float, size_t> float_index_;  // first occurrence wins (emplace)
  std::map<int64_t, size_t> int_index_;
  int64_t nan_value_ = -1;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_LabelEncoder(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"default_float", "default_int64", "default_string", "keys_floats",
                                              "keys_int64s", "keys_strings", "values_floats", "values_int64s",
                                              "values_strings"}));
  GB_RETURN_IF_ERROR(ml::refuse_present(node, {"keys_strings", "values_strings"},
                                        "string keys/values need string tensors, which glassbox does not have"));
  LabelEncoderAttrs a;
  GB_ASSIGN_OR_RETURN(a.keys_int64s, ml::attr_ints_or_empty(node, "keys_int64s"));
  GB_ASSIGN_OR_RETURN(a.keys_floats, ml::attr_floats_or_empty(node, "keys_floats"));
  GB_ASSIGN_OR_RETURN(a.values_int64s, ml::attr_ints_or_empty(node, "values_int64s"));
  GB_ASSIGN_OR_RETURN(a.values_floats, ml::attr_floats_or_empty(node, "values_floats"));
  GB_ASSIGN_OR_RETURN(a.default_int64, attr_int(node, "default_int64", a.default_int64));
  GB_ASSIGN_OR_RETURN(a.default_float, attr_float(node, "default_float", a.default_float));
  if (a.keys_int64s.empty() == a.keys_floats.empty())
    return ml::bad_attr("exactly one of keys_int64s and keys_floats must be given (non-empty)");
  if (a.values_int64s.empty() == a.values_floats.empty())
    return ml::bad_attr("exactly one of values_int64s and values_floats must be given (non-empty)");
  const size_t nk = std::max(a.keys_int64s.size(), a.keys_floats.size());
  const size_t nv = std::max(a.values_int64s.size(), a.values_floats.size());
  if (nk != nv)
    return ml::bad_attr("keys has " + std::to_string(nk) + " entries, values " + std::to_string(nv) + " (one value per key)");
  return std::unique_ptr<Op>(new LabelEncoderOp(std::move(a)));
}

}  // namespace glassbox::ops
