// LabelEncoder (ai.onnx.ml 2-3): X of the keys' type -> Y of the values' type, same shape;
// keys not found map to the default of the values' type. Keys and values are each int64
// (keys_int64s / values_int64s), float32 (*_floats) or string (*_strings; X or Y is then a
// string tensor): all nine pairs, as onnxruntime. Float keys compare by value, a NaN key
// matches NaN; strings compare as bytes; the first occurrence of a repeated key wins.
// A default for another type than the values' (default_string with values_int64s) is
// refused at load: it would never apply. ai.onnx.ml 1 (classes_strings, direction chosen by
// the input's type) is out of range.
#include <cmath>
#include <map>
#include <unordered_map>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

// One side of the mapping: exactly one of <side>_int64s, <side>_floats, <side>_strings.
struct Column {
  DataType dtype = DataType::kUndefined;  // kInt64, kFloat32 or kString
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  size_t size() const { return std::max({ints.size(), floats.size(), strings.size()}); }
};

Result<Column> parse_column(const graph::Node& node, const std::string& side) {
  Column c;
  GB_ASSIGN_OR_RETURN(c.ints, ml::attr_ints_or_empty(node, side + "_int64s"));
  GB_ASSIGN_OR_RETURN(c.floats, ml::attr_floats_or_empty(node, side + "_floats"));
  GB_ASSIGN_OR_RETURN(c.strings, ml::attr_strings(node, side + "_strings"));
  const int given = !c.ints.empty() + !c.floats.empty() + !c.strings.empty();
  if (given != 1)
    return ml::bad_attr("exactly one of " + side + "_int64s, " + side + "_floats and " + side +
                        "_strings must be given (non-empty); got " + std::to_string(c.ints.size()) + ", " +
                        std::to_string(c.floats.size()) + " and " + std::to_string(c.strings.size()) + " entries");
  c.dtype = !c.ints.empty() ? DataType::kInt64 : !c.floats.empty() ? DataType::kFloat32 : DataType::kString;
  return c;
}

struct LabelEncoderAttrs {
  Column keys;
  Column values;
  int64_t default_int64 = -1;               // Y for unknown keys (int64 values), spec default
  float default_float = -0.f;               // Y for unknown keys (float values), spec default -0.0
  std::string default_string = "_Unused";  // Y for unknown keys (string values), spec default
};

class LabelEncoderOp final : public Op {
 public:
  explicit LabelEncoderOp(LabelEncoderAttrs a) : a_(std::move(a)) {
    const Column& k = a_.keys;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.dtype == DataType::kInt64) int_index_.emplace(k.ints[i], i);
      else if (k.dtype == DataType::kString) string_index_.emplace(k.strings[i], i);
      else if (std::isnan(k.floats[i])) nan_value_ = nan_value_ < 0 ? static_cast<int64_t>(i) : nan_value_;
      else float_index_.emplace(k.floats[i], i);
    }
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->dtype() != a_.keys.dtype)
      return op_error(ctx, ErrorCode::kInvalidArgument, std::string("X has dtype ") + dtype_name(x->dtype()) +
                                                            ", the keys are " + dtype_name(a_.keys.dtype));
    const int64_t n = x->numel();
    std::vector<int64_t> at(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) at[i] = find(*x, i);
    const Column& v = a_.values;
    if (v.dtype == DataType::kString) {
      std::vector<std::string> out(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out[i] = at[i] < 0 ? a_.default_string : v.strings[at[i]];
      return ctx.set_output_strings(0, x->shape(), std::move(out));
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, v.dtype, x->shape()));
    for (int64_t i = 0; i < n; ++i) {
      if (v.dtype == DataType::kFloat32) y->mutable_data<float>()[i] = at[i] < 0 ? a_.default_float : v.floats[at[i]];
      else y->mutable_data<int64_t>()[i] = at[i] < 0 ? a_.default_int64 : v.ints[at[i]];
    }
    return {};
  }

 private:
  // Position of X[i] among the keys, -1 when absent.
  int64_t find(const Tensor& x, int64_t i) const {
    switch (a_.keys.dtype) {
      case DataType::kInt64: return lookup(int_index_, x.data<int64_t>()[i]);
      case DataType::kString: return lookup(string_index_, x.string_data()[i]);
      default: {
        const float f = x.data<float>()[i];
        return std::isnan(f) ? nan_value_ : lookup(float_index_, f);
      }
    }
  }
  template <class M, class K>
  static int64_t lookup(const M& m, const K& key) {
    auto it = m.find(key);
    return it == m.end() ? -1 : static_cast<int64_t>(it->second);
  }

  LabelEncoderAttrs a_;
  std::map<float, size_t> float_index_;  // first occurrence wins (emplace)
  std::map<int64_t, size_t> int_index_;
  std::unordered_map<std::string, size_t> string_index_;
  int64_t nan_value_ = -1;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_LabelEncoder(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"default_float", "default_int64", "default_string", "keys_floats",
                                              "keys_int64s", "keys_strings", "values_floats", "values_int64s",
                                              "values_strings"}));
  LabelEncoderAttrs a;
  GB_ASSIGN_OR_RETURN(a.keys, parse_column(node, "keys"));
  GB_ASSIGN_OR_RETURN(a.values, parse_column(node, "values"));
  GB_ASSIGN_OR_RETURN(a.default_int64, attr_int(node, "default_int64", a.default_int64));
  GB_ASSIGN_OR_RETURN(a.default_float, attr_float(node, "default_float", a.default_float));
  GB_ASSIGN_OR_RETURN(a.default_string, attr_string(node, "default_string", a.default_string));
  if (a.keys.size() != a.values.size())
    return ml::bad_attr("keys has " + std::to_string(a.keys.size()) + " entries, values " + std::to_string(a.values.size()) +
                        " (one value per key)");
  const struct {
    const char* name;
    DataType dtype;
  } defaults[] = {{"default_int64", DataType::kInt64}, {"default_float", DataType::kFloat32}, {"default_string", DataType::kString}};
  for (const auto& d : defaults)
    if (node.attr(d.name) && d.dtype != a.values.dtype)
      return ml::bad_attr(std::string(d.name) + " is given but the values are " + dtype_name(a.values.dtype) +
                          ": it would never apply (the default for unknown keys must have the values' type)");
  return std::unique_ptr<Op>(new LabelEncoderOp(std::move(a)));
}

}  // namespace glassbox::ops
