// Variadic elementwise ops with multidirectional broadcasting over all inputs:
// Sum, Mean, Min, Max. The output starts as f(in0, in1) and folds in the rest;
// a single input is copied. Opsets < 8 required equal shapes (a subset).
// float16 folds through float32, rounding back to float16 after each step.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/binary.h"

namespace glassbox::ops {
namespace {

enum class Fold { kSum, kMean, kMin, kMax };

template <class T>
T fold_scalar(Fold f, T a, T b) {
  switch (f) {
    case Fold::kSum: case Fold::kMean: return static_cast<T>(a + b);
    case Fold::kMin:
      if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return a + b;  // NaN wins
      return std::min(a, b);
    case Fold::kMax:
      if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return a + b;
      return std::max(a, b);
  }
  return a;
}

template <class T>
void run_fold(ComputeContext& ctx, Fold f, const Tensor& a, const Tensor& b, Tensor& out) {
  if constexpr (std::is_same_v<T, Float16>) {
    parallel_binary<T, T, T>(ctx.pool(), a, b, out, [f](T x, T y) {
      return kernels::float_to_half(fold_scalar(f, kernels::half_to_float(x), kernels::half_to_float(y)));
    });
  } else {
    switch (f) {  // one instantiation per fold keeps the inner loop branch-free
      case Fold::kSum: case Fold::kMean:
        parallel_binary<T, T, T>(ctx.pool(), a, b, out, [](T x, T y) { return static_cast<T>(x + y); });
        break;
      case Fold::kMin: parallel_binary<T, T, T>(ctx.pool(), a, b, out, [](T x, T y) { return fold_scalar(Fold::kMin, x, y); }); break;
      case Fold::kMax: parallel_binary<T, T, T>(ctx.pool(), a, b, out, [](T x, T y) { return fold_scalar(Fold::kMax, x, y); }); break;
    }
  }
}

class VariadicOp final : public Op {
 public:
  VariadicOp(std::string op_type, Fold fold) : op_type_(std::move(op_type)), fold_(fold) {}

  Status compute(ComputeContext& ctx) const override {
    std::vector<const Tensor*> ins;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, "data"));
      if (!ins.empty()) GB_RETURN_IF_ERROR(same_dtype(ctx, *ins[0], *t));
      ins.push_back(t);
      shapes.push_back(t->shape());
    }
    if (ins.empty()) return op_error(ctx, ErrorCode::kInvalidArgument, op_type_ + " needs at least one input");
    GB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(shapes));
    using Types =
        TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t, int8_t, int16_t, uint8_t, uint16_t, Float16>;
    return dispatch_dtype<Types>(ins[0]->dtype(), op_type_, [&]<class T>() -> Status {
      constexpr bool is_half = std::is_same_v<T, Float16>;
      if (fold_ == Fold::kMean && !std::is_floating_point_v<T> && !is_half)
        return op_error(ctx, ErrorCode::kUnsupported, "Mean supports float16/float32/float64 only");
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ins[0]->dtype(), shape));
      if (ins.size() == 1) {
        if (y->nbytes()) std::memcpy(y->mutable_raw(), ins[0]->raw(), y->nbytes());
        return {};
      }
      run_fold<T>(ctx, fold_, *ins[0], *ins[1], *y);
      for (size_t i = 2; i < ins.size(); ++i) run_fold<T>(ctx, fold_, *y, *ins[i], *y);  // in place: same shape
      if (fold_ == Fold::kMean) {
        T* p = y->mutable_data<T>();
        if constexpr (is_half) {
          const float n = static_cast<float>(ins.size());
          parallel_unary(ctx.pool(), p, p, y->numel(),
                         [n](T v) { return kernels::float_to_half(kernels::half_to_float(v) / n); });
        } else {
          const T n = static_cast<T>(ins.size());
          parallel_unary(ctx.pool(), p, p, y->numel(), [n](T v) { return v / n; });
        }
      }
      return {};
    });
  }

 private:
  std::string op_type_;
  Fold fold_;
};

Result<std::unique_ptr<Op>> make_variadic(const graph::Node& node, Fold fold) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new VariadicOp(node.op_type, fold));
}

}  // namespace

Result<std::unique_ptr<Op>> create_Sum(const graph::Node& node, int64_t) { return make_variadic(node, Fold::kSum); }
Result<std::unique_ptr<Op>> create_Mean(const graph::Node& node, int64_t) { return make_variadic(node, Fold::kMean); }
Result<std::unique_ptr<Op>> create_Min(const graph::Node& node, int64_t) { return make_variadic(node, Fold::kMin); }
Result<std::unique_ptr<Op>> create_Max(const graph::Node& node, int64_t) { return make_variadic(node, Fold::kMax); }

}  // namespace glassbox::ops
