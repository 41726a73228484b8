// ArrayFeatureExtractor (ai.onnx.ml 1-3): selects columns Y (int64 indices into the last
// axis) of X: [..., C] -> [..., len(Y)]; a 1-D X gives [1, len(Y)] (as onnxruntime).
// Indices must lie in [0, C). float32, float64, int64, int32, string.
#include <cstring>

#include "ops/dtype_dispatch.h"
#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

class ArrayFeatureExtractorOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(const Tensor* y_idx, require_input(ctx, 1, "Y"));
    if (x->rank() < 1) return op_error(ctx, ErrorCode::kInvalidArgument, "X must have rank >= 1");
    if (y_idx->dtype() != DataType::kInt64)
      return op_error(ctx, ErrorCode::kInvalidArgument, "Y (indices) must be int64");
    const int64_t cols = x->shape().back(), k = y_idx->numel();
    const int64_t* idx = y_idx->data<int64_t>();
    for (int64_t j = 0; j < k; ++j)
      if (idx[j] < 0 || idx[j] >= cols)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "index " + std::to_string(idx[j]) + " is out of range for " + std::to_string(cols) + " columns");
    Shape shape = x->shape();
    if (x->rank() == 1) shape = {1, k};
    else shape.back() = k;
    const int64_t rows = cols == 0 ? 0 : x->numel() / cols;
    if (const std::string* px = x->string_data()) {
      std::vector<std::string> out;
      out.reserve(static_cast<size_t>(rows * k));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < k; ++j) out.push_back(px[r * cols + idx[j]]);
      return ctx.set_output_strings(0, shape, std::move(out));
    }
    return dispatch_dtype<TypeList<float, double, int64_t, int32_t>>(x->dtype(), "ArrayFeatureExtractor", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), shape));
      const T* px = x->data<T>();
      T* po = out->mutable_data<T>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < k; ++j) po[r * k + j] = px[r * cols + idx[j]];
      return {};
    });
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_ArrayFeatureExtractor(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new ArrayFeatureExtractorOp());
}

}  // namespace glassbox::ops
