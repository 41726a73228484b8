// Scaler (ai.onnx.ml 1-3): Y = (X - offset) * scale, float32, X [N, C] or [C];
// offset and scale have one entry (all columns) or C entries.
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct ScalerAttrs {
  std::vector<float> offset;  // subtracted first (size 1 or C; default none: 0)
  std::vector<float> scale;   // then multiplied (size 1 or C; default none: 1)
};

class ScalerOp final : public Op {
 public:
  explicit ScalerOp(ScalerAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    for (const auto* v : {&a_.offset, &a_.scale})
      if (v->size() > 1 && static_cast<int64_t>(v->size()) != m.cols)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        std::string(v == &a_.offset ? "offset" : "scale") + " has " + std::to_string(v->size()) +
                            " entries, X has " + std::to_string(m.cols) + " columns (need 1 or one per column)");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    float* py = y->mutable_data<float>();
    auto at = [](const std::vector<float>& v, int64_t c, float d) { return v.empty() ? d : v[v.size() == 1 ? 0 : c]; };
    for (int64_t r = 0; r < m.rows; ++r)
      for (int64_t c = 0; c < m.cols; ++c)
        py[r * m.cols + c] = (m.data[r * m.cols + c] - at(a_.offset, c, 0.f)) * at(a_.scale, c, 1.f);
    return {};
  }

 private:
  ScalerAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_Scaler(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"offset", "scale"}));
  ScalerAttrs a;
  GB_ASSIGN_OR_RETURN(a.offset, ml::attr_floats_or_empty(node, "offset"));
  GB_ASSIGN_OR_RETURN(a.scale, ml::attr_floats_or_empty(node, "scale"));
  return std::unique_ptr<Op>(new ScalerOp(std::move(a)));
}

}  // namespace glassbox::ops
