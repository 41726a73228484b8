// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular
// filters mapping a one-sided spectrum to mel bins. As the ONNX reference: the
// num_mel_bins + 2 band edges are spaced evenly in mel (mel = 2595 log10(1 + hz
// / 700)) with step (high - low) / (num_mel_bins + 2), converted back to hertz
// and to spectrum bins as floor((dft_length + 1) * hz / sample_rate). Edges
// outside the spectrum are refused.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct MelWeightMatrixAttrs {
  DataType output_datatype = DataType::kFloat32;  // element type of the matrix (TensorProto code, default 1)
};

constexpr int64_t kMaxBins = int64_t{1} << 20;  // larger sizes are refused (shape bomb)

Result<int64_t> int_scalar(const ComputeContext& ctx, size_t i, const char* what) {
  GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, what));
  GB_ASSIGN_OR_RETURN(auto v, tensor_to_int64s(*t, what));
  if (v.size() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must hold one value");
  return v[0];
}

Result<double> float_scalar(const ComputeContext& ctx, size_t i, const char* what) {
  GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, what));
  if (t->numel() != 1) return op_error(ctx, ErrorCode::kInvalidArgument, std::string(what) + " must hold one value");
  if (t->dtype() == DataType::kFloat32) return static_cast<double>(t->data<float>()[0]);
  if (t->dtype() == DataType::kFloat64) return t->data<double>()[0];
  return op_error(ctx, ErrorCode::kUnsupported, std::string(what) + " must be float32 or float64");
}

double hz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

class MelWeightMatrixOp final : public Op {
 public:
  explicit MelWeightMatrixOp(MelWeightMatrixAttrs a) : a_(a) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(int64_t mels, int_scalar(ctx, 0, "num_mel_bins"));
    GB_ASSIGN_OR_RETURN(int64_t dft_length, int_scalar(ctx, 1, "dft_length"));
    GB_ASSIGN_OR_RETURN(int64_t rate, int_scalar(ctx, 2, "sample_rate"));
    GB_ASSIGN_OR_RETURN(double low, float_scalar(ctx, 3, "lower_edge_hertz"));
    GB_ASSIGN_OR_RETURN(double high, float_scalar(ctx, 4, "upper_edge_hertz"));
    if (mels < 1 || mels > kMaxBins || dft_length < 1 || dft_length > 2 * kMaxBins || rate < 1)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "need 1 <= num_mel_bins <= 2^20, 1 <= dft_length <= 2^21 and sample_rate >= 1");
    if (!(low >= 0.0) || !(high > low) || !std::isfinite(high))
      return op_error(ctx, ErrorCode::kInvalidArgument, "need 0 <= lower_edge_hertz < upper_edge_hertz");
    const int64_t spectrum = dft_length / 2 + 1;
    std::vector<int64_t> edge(static_cast<size_t>(mels + 2));
    const double low_mel = hz_to_mel(low), high_mel = hz_to_mel(high);
    const double step = (high_mel - low_mel) / static_cast<double>(mels + 2);
    for (int64_t i = 0; i < mels + 2; ++i) {
      const double hz = mel_to_hz(static_cast<double>(i) * step + low_mel);
      const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
      if (!(bin >= 0.0) || bin >= static_cast<double>(spectrum))
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "mel band edge " + std::to_string(hz) + " Hz falls outside the " + std::to_string(spectrum) +
                            "-bin spectrum (is upper_edge_hertz above sample_rate / 2?)");
      edge[i] = static_cast<int64_t>(bin);
    }
    GB_ASSIGN_OR_RETURN(Tensor w_t, ctx.allocate_scratch(DataType::kFloat64, Shape{spectrum, mels}));  // charged first
    double* w = w_t.mutable_data<double>();
    std::fill(w, w + spectrum * mels, 0.0);
    for (int64_t m = 0; m < mels; ++m) {
      const int64_t lo = edge[m], center = edge[m + 1], hi = edge[m + 2];
      if (center == lo) {
        w[center * mels + m] = 1.0;
      } else {
        for (int64_t j = lo; j <= center; ++j)
          w[j * mels + m] = static_cast<double>(j - lo) / static_cast<double>(center - lo);
      }
      for (int64_t j = center; j < hi; ++j)
        w[j * mels + m] = static_cast<double>(hi - j) / static_cast<double>(hi - center);
    }
    return dispatch_dtype<NumericTypes>(a_.output_datatype, "MelWeightMatrix output_datatype", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a_.output_datatype, Shape{spectrum, mels}));
      T* py = y->mutable_data<T>();
      for (int64_t i = 0; i < spectrum * mels; ++i) py[i] = static_cast<T>(w[i]);
      return {};
    });
  }

 private:
  MelWeightMatrixAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_MelWeightMatrix(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"output_datatype"}));
  MelWeightMatrixAttrs a;
  GB_ASSIGN_OR_RETURN(int64_t dt, attr_int(node, "output_datatype", 1));
  if (!dtype_is_valid(static_cast<int32_t>(dt)) || !dtype_in(static_cast<DataType>(dt), NumericTypes{}))
    return unsupported_attr("output_datatype", std::to_string(dt) + " is not a supported numeric dtype");
  a.output_datatype = static_cast<DataType>(dt);
  return std::unique_ptr<Op>(new MelWeightMatrixOp(a));
}

}  // namespace glassbox::ops
