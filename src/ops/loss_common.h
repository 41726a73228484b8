// Shared by NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+):
// attributes, input validation and the NLL + reduction step.
//   input [N, C] or [N, C, d1..dk] (float32/float64), target [N] or [N, d1..dk]
//   (int32/int64), optional weight [C]. reduction "none" gives target's shape,
//   "sum"/"mean" a scalar; "mean" divides by the summed weights of the targets
//   that are not ignore_index (by their count without weights).
#pragma once

#include <optional>
#include <string>

#include "kernels/loss.h"
#include "ops/dtype_dispatch.h"
#include "ops/nn_args.h"

namespace glassbox::ops {

enum class LossReduction { kNone, kSum, kMean };

struct LossAttrs {
  LossReduction reduction = LossReduction::kMean;  // spec default "mean"
  std::optional<int64_t> ignore_index;             // absent: every target counts
};

inline Result<LossAttrs> parse_loss_attrs(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"reduction", "ignore_index"}));
  LossAttrs a;
  GB_ASSIGN_OR_RETURN(std::string r, attr_string(node, "reduction", "mean"));
  if (r == "none") a.reduction = LossReduction::kNone;
  else if (r == "sum") a.reduction = LossReduction::kSum;
  else if (r == "mean") a.reduction = LossReduction::kMean;
  else return unsupported_attr("reduction", "'" + r + "' is not one of none, sum, mean");
  if (node.attr("ignore_index")) {
    GB_ASSIGN_OR_RETURN(int64_t ii, attr_int(node, "ignore_index", 0));
    a.ignore_index = ii;
  }
  return a;
}

// The [N, C, D] view of a loss input after checking input/target/weight agree.
struct LossDims {
  int64_t N = 0, C = 0, D = 1;
};

inline Result<LossDims> check_loss_inputs(const ComputeContext& ctx, const Tensor& x, const Tensor& target,
                                          const Tensor* weight) {
  if (x.dtype() != DataType::kFloat32 && x.dtype() != DataType::kFloat64)
    return nn::node_error(ctx, ErrorCode::kUnsupported,
                          std::string("input has dtype ") + dtype_name(x.dtype()) + "; float32 and float64 are supported",
                          "cast the scores to float32");
  if (target.dtype() != DataType::kInt64 && target.dtype() != DataType::kInt32)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string("target must be int32 or int64, got ") + dtype_name(target.dtype()));
  if (x.rank() < 2)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "input " + shape_to_string(x.shape()) + " needs rank >= 2 ([N, C, d1..dk])");
  LossDims d;
  d.N = x.shape()[0];
  d.C = x.shape()[1];
  Shape want{d.N};
  for (int64_t i = 2; i < x.rank(); ++i) {
    want.push_back(x.shape()[i]);
    d.D *= x.shape()[i];
  }
  if (target.shape() != want)
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          "target " + shape_to_string(target.shape()) + " must have shape " + shape_to_string(want) +
                              " (input " + shape_to_string(x.shape()) + " without the class dim)");
  if (weight && (weight->dtype() != x.dtype() || weight->shape() != Shape{d.C}))
    return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                          std::string("weight ") + dtype_name(weight->dtype()) + shape_to_string(weight->shape()) +
                              " must be " + dtype_name(x.dtype()) + "[" + std::to_string(d.C) + "]");
  return d;
}

// Output `out_index` = NLL of the log-probabilities `logp` (checked by
// check_loss_inputs), reduced as the attributes say.
inline Status nll_to_output(ComputeContext& ctx, size_t out_index, const Tensor& logp, const Tensor& target,
                            const Tensor* weight, const LossDims& d, const LossAttrs& a) {
  const Shape out_shape = a.reduction == LossReduction::kNone ? target.shape() : Shape{};
  return dispatch_dtype<FloatTypes>(logp.dtype(), "loss", [&]<class T>() -> Status {
    Tensor per_elem;
    T* loss = nullptr;
    Tensor* y = nullptr;
    if (a.reduction == LossReduction::kNone) {
      GB_ASSIGN_OR_RETURN(y, ctx.allocate_output(out_index, dtype_of<T>(), out_shape));
      loss = y->mutable_data<T>();
    } else {
      GB_ASSIGN_OR_RETURN(per_elem, ctx.allocate_scratch(dtype_of<T>(), target.shape()));
      loss = per_elem.mutable_data<T>();
    }
    double wsum = 0;
    int64_t bad = -1;
    const T* w = weight ? weight->data<T>() : nullptr;
    const bool use_ii = a.ignore_index.has_value();
    const int64_t ii = a.ignore_index.value_or(0);
    if (target.dtype() == DataType::kInt64)
      bad = kernels::nll_loss(logp.data<T>(), target.data<int64_t>(), w, d.N, d.C, d.D, use_ii, ii, loss, &wsum);
    else
      bad = kernels::nll_loss(logp.data<T>(), target.data<int32_t>(), w, d.N, d.C, d.D, use_ii, ii, loss, &wsum);
    if (bad >= 0) {
      const int64_t t = target.dtype() == DataType::kInt64 ? target.data<int64_t>()[bad] : target.data<int32_t>()[bad];
      return nn::node_error(ctx, ErrorCode::kInvalidArgument,
                            "target element " + std::to_string(bad) + " is " + std::to_string(t) +
                                ", outside the classes [0, " + std::to_string(d.C) + ")" +
                                (use_ii ? " and not ignore_index " + std::to_string(ii) : std::string()));
    }
    if (a.reduction == LossReduction::kNone) return Status::ok_status();
    double sum = 0;
    for (int64_t i = 0; i < per_elem.numel(); ++i) sum += static_cast<double>(loss[i]);
    // mean over zero counted weight is 0/0 = NaN, as in the spec's reference.
    if (a.reduction == LossReduction::kMean) sum /= wsum;
    GB_ASSIGN_OR_RETURN(y, ctx.allocate_output(out_index, dtype_of<T>(), out_shape));
    y->mutable_data<T>()[0] = static_cast<T>(sum);
    return Status::ok_status();
  });
}

}  // namespace glassbox::ops
