// FeatureVectorizer (ai.onnx.ml 1-3): concatenates inputs X_i [N, C_i] (or [C_i]: one
// row) into Y float32 [N, sum(inputdimensions)]; input i fills inputdimensions[i] columns
// (extra columns dropped, missing ones 0). int32, int64, float32, float64 inputs.
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

struct FeatureVectorizerAttrs {
  std::vector<int64_t> inputdimensions;  // columns each input contributes (required, one per input)
};

class FeatureVectorizerOp final : public Op {
 public:
  explicit FeatureVectorizerOp(FeatureVectorizerAttrs a) : a_(std::move(a)) {}

  Status compute(ComputeContext& ctx) const override {
    const auto& dims = a_.inputdimensions;
    if (ctx.num_inputs() != dims.size())
      return op_error(ctx, ErrorCode::kInvalidArgument, std::to_string(ctx.num_inputs()) + " inputs, inputdimensions has " +
                                                            std::to_string(dims.size()) + " entries");
    std::vector<ml::FloatMatrix> in;
    int64_t rows = -1, width = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, i, "X"));
      GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
      if (rows >= 0 && m.rows != rows)
        return op_error(ctx, ErrorCode::kInvalidArgument, "input " + std::to_string(i) + " has " + std::to_string(m.rows) +
                                                              " rows, input 0 has " + std::to_string(rows));
      rows = m.rows;
      width += dims[i];
      in.push_back(std::move(m));
    }
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, {rows, width}));
    float* py = y->mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      float* out = py + r * width;
      for (size_t i = 0; i < dims.size(); ++i) {
        for (int64_t c = 0; c < dims[i]; ++c) out[c] = c < in[i].cols ? in[i].data[r * in[i].cols + c] : 0.f;
        out += dims[i];
      }
    }
    return {};
  }

 private:
  FeatureVectorizerAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_FeatureVectorizer(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"inputdimensions"}));
  FeatureVectorizerAttrs a;
  GB_ASSIGN_OR_RETURN(a.inputdimensions, ml::attr_ints_or_empty(node, "inputdimensions"));
  if (a.inputdimensions.empty()) return ml::bad_attr("inputdimensions is empty");
  for (int64_t d : a.inputdimensions)
    if (d < 0 || d > (int64_t{1} << 31))
      return ml::bad_attr("inputdimensions entry " + std::to_string(d) + " is out of range [0, 2^31]");
  return std::unique_ptr<Op>(new FeatureVectorizerOp(std::move(a)));
}

}  // namespace glassbox::ops
