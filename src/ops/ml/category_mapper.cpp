// CategoryMapper (ai.onnx.ml 1-3): string <-> int64 through the pairs (cats_strings[i],
// cats_int64s[i]). A string X gives int64 Y (default_int64 for an unknown string); an int64
// X gives string Y (default_string for an unknown id); same shape. The direction is the
// input's type, as in the spec. Both lists must be equal-length and non-empty, and neither
// may repeat an entry: a repeated string or id would make one direction ambiguous
// (onnxruntime silently keeps the last pair), so such a model is refused at load.
#include <unordered_map>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct CategoryMapperAttrs {
  std::vector<std::string> cats_strings;   // required, paired with cats_int64s
  std::vector<int64_t> cats_int64s;        // required, same length
  int64_t default_int64 = -1;              // Y for an unknown string, spec default
  std::string default_string = "_Unused";  // Y for an unknown id, spec default
};

class CategoryMapperOp final : public Op {
 public:
  explicit CategoryMapperOp(CategoryMapperAttrs a) : a_(std::move(a)) {
    for (size_t i = 0; i < a_.cats_strings.size(); ++i) {
      to_int_.emplace(a_.cats_strings[i], a_.cats_int64s[i]);
      to_string_.emplace(a_.cats_int64s[i], i);
    }
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    const int64_t n = x->numel();
    if (const std::string* px = x->string_data()) {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, x->shape()));
      int64_t* py = y->mutable_data<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        auto it = to_int_.find(px[i]);
        py[i] = it == to_int_.end() ? a_.default_int64 : it->second;
      }
      return {};
    }
    if (x->dtype() != DataType::kInt64)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string("X has dtype ") + dtype_name(x->dtype()) + "; CategoryMapper maps string or int64");
    const int64_t* px = x->data<int64_t>();
    std::vector<std::string> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      auto it = to_string_.find(px[i]);
      out[i] = it == to_string_.end() ? a_.default_string : a_.cats_strings[it->second];
    }
    return ctx.set_output_strings(0, x->shape(), std::move(out));
  }

 private:
  CategoryMapperAttrs a_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, size_t> to_string_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_CategoryMapper(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"cats_int64s", "cats_strings", "default_int64", "default_string"}));
  CategoryMapperAttrs a;
  GB_ASSIGN_OR_RETURN(a.cats_strings, ml::attr_strings(node, "cats_strings"));
  GB_ASSIGN_OR_RETURN(a.cats_int64s, ml::attr_ints_or_empty(node, "cats_int64s"));
  GB_ASSIGN_OR_RETURN(a.default_int64, attr_int(node, "default_int64", a.default_int64));
  GB_ASSIGN_OR_RETURN(a.default_string, attr_string(node, "default_string", a.default_string));
  if (a.cats_strings.empty() || a.cats_strings.size() != a.cats_int64s.size())
    return ml::bad_attr("cats_strings (" + std::to_string(a.cats_strings.size()) + " entries) and cats_int64s (" +
                        std::to_string(a.cats_int64s.size()) + ") must be non-empty and of equal length (one id per string)");
  std::unordered_map<std::string, int> seen_s;
  std::unordered_map<int64_t, int> seen_i;
  for (size_t i = 0; i < a.cats_strings.size(); ++i) {
    if (seen_s[a.cats_strings[i]]++)
      return ml::bad_attr("cats_strings lists '" + a.cats_strings[i].substr(0, 64) + "' twice (the string -> int64 direction would be ambiguous)");
    if (seen_i[a.cats_int64s[i]]++)
      return ml::bad_attr("cats_int64s lists " + std::to_string(a.cats_int64s[i]) +
                          " twice (the int64 -> string direction would be ambiguous)");
  }
  return std::unique_ptr<Op>(new CategoryMapperOp(std::move(a)));
}

}  // namespace glassbox::ops
