// Normalizer (ai.onnx.ml 1-3): each row of X [N, C] (or the vector [C]) divided by its
// MAX (largest value), L1 (sum of |x|) or L2 (Euclidean) norm; a row whose norm is 0 is
// copied unchanged. float32 output.
#include <cmath>
#include <limits>

#include "ops/ml/ml_common.h"

namespace glassbox::ops {
namespace {

enum class Norm { kMax, kL1, kL2 };

struct NormalizerAttrs {
  Norm norm = Norm::kMax;  // "MAX" | "L1" | "L2" (default MAX)
};

class NormalizerOp final : public Op {
 public:
  explicit NormalizerOp(NormalizerAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    float* py = y->mutable_data<float>();
    for (int64_t r = 0; r < m.rows; ++r) {
      const float* in = m.data + r * m.cols;
      float* out = py + r * m.cols;
      float norm = 0.f;
      if (a_.norm == Norm::kMax) {
        norm = std::numeric_limits<float>::lowest();
        for (int64_t c = 0; c < m.cols; ++c) norm = std::max(norm, in[c]);
      } else {
        for (int64_t c = 0; c < m.cols; ++c) norm += a_.norm == Norm::kL1 ? std::fabs(in[c]) : in[c] * in[c];
        if (a_.norm == Norm::kL2) norm = std::sqrt(norm);
      }
      for (int64_t c = 0; c < m.cols; ++c) out[c] = norm != 0.f ? in[c] / norm : in[c];
    }
    return {};
  }

 private:
  NormalizerAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ml_Normalizer(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"norm"}));
  NormalizerAttrs a;
  GB_ASSIGN_OR_RETURN(std::string norm, attr_string(node, "norm", "MAX"));
  if (norm == "MAX") a.norm = Norm::kMax;
  else if (norm == "L1") a.norm = Norm::kL1;
  else if (norm == "L2") a.norm = Norm::kL2;
  else return ml::bad_attr("norm '" + norm + "' is not one of MAX, L1, L2");
  return std::unique_ptr<Op>(new NormalizerOp(a));
}

}  // namespace glassbox::ops
