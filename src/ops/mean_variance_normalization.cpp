// MeanVarianceNormalization (opset 9, 13): Y = (X - mean) / (std + 1e-9) with
// mean and std over `axes` (default [0, 2, 3]), as the spec's function body
// (it adds epsilon 1e-9 to the standard deviation, not to the variance).
// float32/float64; statistics in double, variance two-pass (never negative).
#include <cmath>
#include <vector>

#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct MeanVarianceNormalizationAttrs {
  std::vector<int64_t> axes = {0, 2, 3};  // the dims the statistics run over
};

constexpr double kEpsilon = 1e-9;  // the spec function's Epsilon constant

class MeanVarianceNormalizationOp final : public Op {
 public:
  explicit MeanVarianceNormalizationOp(MeanVarianceNormalizationAttrs a) : a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "X"));
    const int64_t r = x->rank();
    std::vector<bool> reduced(static_cast<size_t>(r), false);
    for (int64_t a : a_.axes) {
      GB_ASSIGN_OR_RETURN(int64_t ax, nn::norm_axis(&ctx, a, r, "axes entry"));
      reduced[ax] = true;
    }
    // Group of each element: its index with the reduced dims dropped.
    std::vector<int64_t> group_stride(static_cast<size_t>(r), 0);
    int64_t groups = 1;
    for (int64_t d = r - 1; d >= 0; --d)
      if (!reduced[d]) {
        group_stride[d] = groups;
        groups *= x->shape()[d];
      }
    return dispatch_dtype<FloatTypes>(x->dtype(), "MeanVarianceNormalization", [&]<class T>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      std::vector<int64_t> group(static_cast<size_t>(x->numel()));
      std::vector<int64_t> idx(static_cast<size_t>(r), 0);
      for (int64_t e = 0; e < x->numel(); ++e) {
        int64_t g = 0;
        for (int64_t d = 0; d < r; ++d) g += idx[d] * group_stride[d];
        group[e] = g;
        for (int64_t d = r - 1; d >= 0; --d) {
          if (++idx[d] < x->shape()[d]) break;
          idx[d] = 0;
        }
      }
      const T* px = x->data<T>();
      std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
      std::vector<int64_t> cnt(static_cast<size_t>(groups), 0);
      for (int64_t e = 0; e < x->numel(); ++e) {
        sum[group[e]] += static_cast<double>(px[e]);
        ++cnt[group[e]];
      }
      for (int64_t g = 0; g < groups; ++g) sum[g] = cnt[g] ? sum[g] / static_cast<double>(cnt[g]) : 0.0;
      for (int64_t e = 0; e < x->numel(); ++e) {
        const double dv = static_cast<double>(px[e]) - sum[group[e]];
        sq[group[e]] += dv * dv;
      }
      for (int64_t g = 0; g < groups; ++g)
        sq[g] = std::sqrt(cnt[g] ? sq[g] / static_cast<double>(cnt[g]) : 0.0) + kEpsilon;
      T* py = y->mutable_data<T>();
      for (int64_t e = 0; e < x->numel(); ++e)
        py[e] = static_cast<T>((static_cast<double>(px[e]) - sum[group[e]]) / sq[group[e]]);
      return Status::ok_status();
    });
  }

 private:
  MeanVarianceNormalizationAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_MeanVarianceNormalization(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"axes"}));
  MeanVarianceNormalizationAttrs a;
  GB_ASSIGN_OR_RETURN(a.axes, nn::attr_ints_or(node, "axes", {0, 2, 3}));
  return std::unique_ptr<Op>(new MeanVarianceNormalizationOp(std::move(a)));
}

}  // namespace glassbox::ops
