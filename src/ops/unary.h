// One generic op for elementwise unary functions: y = fn(x), output dtype =
// fn's return type for the input's C++ type. Each ONNX unary op is a one-line
// scalar function plus its dtype list (see unary_math.cpp, activations.cpp).
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {

using VecF32 = void (*)(const float*, float*, int64_t);

template <class Types, class Fn>
class UnaryOp final : public Op {
 public:
  // vec_f32: optional vectorized float32 array version (kernels/vmath.h).
  UnaryOp(std::string op_type, Fn fn, VecF32 vec_f32 = nullptr)
      : op_type_(std::move(op_type)), fn_(std::move(fn)), vec_f32_(vec_f32) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    return dispatch_dtype<Types>(x->dtype(), op_type_, [&]<class T>() -> Status {
      using Out = std::invoke_result_t<const Fn&, T>;
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<Out>(), x->shape()));
      if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float>) {
        if (vec_f32_) {
          const float* px = x->data<float>();
          float* py = y->mutable_data<float>();
          ctx.pool().parallel_for(x->numel(), kElementwiseGrain,
                                  [&](int64_t b, int64_t e) { vec_f32_(px + b, py + b, e - b); });
          return {};
        }
      }
      parallel_unary(ctx.pool(), x->data<T>(), y->mutable_data<Out>(), x->numel(), fn_);
      return {};
    });
  }

 private:
  std::string op_type_;
  Fn fn_;
  VecF32 vec_f32_;
};

// Creates a UnaryOp after refusing attributes not in `known`.
template <class Types, class Fn>
Result<std::unique_ptr<Op>> make_unary(const graph::Node& node, Fn fn, std::initializer_list<const char*> known = {},
                                       VecF32 vec_f32 = nullptr) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, known));
  return std::unique_ptr<Op>(new UnaryOp<Types, Fn>(node.op_type, std::move(fn), vec_f32));
}

}  // namespace glassbox::ops
