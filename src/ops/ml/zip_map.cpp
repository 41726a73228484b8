// ZipMap (ai.onnx.ml 1-3): X float [N, C] (or [C]: one row) -> a sequence of N maps
// {label_j -> X[r, j]}, labels classlabels_int64s or classlabels_strings (exactly one, C of
// them). The output is a Value of kind kMapSequence: the labels [C] once and X's values
// [N, C] (no per-row copies of the keys); `glassbox run` writes it as a JSON list of objects,
// the server as an FP32 tensor with the keys in its parameters (docs/ml.md).
#include <unordered_set>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

class ZipMapOp final : public Op {
 public:
  explicit ZipMapOp(Tensor keys) : keys_(std::move(keys)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kInvalidArgument, std::string("X has dtype ") + dtype_name(x->dtype()) + ", ZipMap takes float32");
    if (x->rank() != 1 && x->rank() != 2)
      return op_error(ctx, ErrorCode::kInvalidArgument, "X must be [N, C] or [C], got " + shape_to_string(x->shape()));
    const int64_t c = x->shape().back();
    if (c != keys_.numel())
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "X has " + std::to_string(c) + " columns but ZipMap has " + std::to_string(keys_.numel()) + " labels");
    GB_ASSIGN_OR_RETURN(Tensor values, x->reshaped({x->rank() == 2 ? x->shape()[0] : 1, c}));
    return ctx.set_output_map_sequence(0, keys_, std::move(values));
  }

 private:
  Tensor keys_;  // int64 or string [C]
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_ZipMap(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"classlabels_int64s", "classlabels_strings"}));
  GB_ASSIGN_OR_RETURN(auto ints, ml::attr_ints_or_empty(node, "classlabels_int64s"));
  GB_ASSIGN_OR_RETURN(auto strings, ml::attr_strings(node, "classlabels_strings"));
  if (ints.empty() == strings.empty())
    return ml::bad_attr("exactly one of classlabels_int64s and classlabels_strings must be given (non-empty); got " +
                        std::to_string(ints.size()) + " and " + std::to_string(strings.size()));
  // Map keys are unique by definition.
  std::unordered_set<std::string> seen_s(strings.begin(), strings.end());
  std::unordered_set<int64_t> seen_i(ints.begin(), ints.end());
  if (seen_s.size() != strings.size() || seen_i.size() != ints.size())
    return ml::bad_attr("classlabels repeat a label: map keys must be unique");
  const auto n = static_cast<int64_t>(std::max(ints.size(), strings.size()));
  if (!strings.empty()) {
    GB_ASSIGN_OR_RETURN(Tensor keys, Tensor::strings({n}, std::move(strings)));
    return std::unique_ptr<Op>(new ZipMapOp(std::move(keys)));
  }
  GB_ASSIGN_OR_RETURN(Tensor keys, Tensor::allocate(DataType::kInt64, {n}));
  std::copy(ints.begin(), ints.end(), keys.mutable_data<int64_t>());
  return std::unique_ptr<Op>(new ZipMapOp(std::move(keys)));
}

}  // namespace glassbox::ops
