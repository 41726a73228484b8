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

template <class Types, class Fn>
class UnaryOp final : public Op {
 public:
  UnaryOp(std::string op_type, Fn fn) : op_type_(std::move(op_type)), fn_(std::move(fn)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    return dispatch_dtype<Types>(x->dtype(), op_type_, [&]<class T>() -> Status {
      using Out = std::invoke_result_t<const Fn&, T>;
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<Out>(), x->shape()));
      parallel_unary(ctx.pool(), x->data<T>(), y->mutable_data<Out>(), x->numel(), fn_);
      return {};
    });
  }

 private:
  std::string op_type_;
  Fn fn_;
};

// Creates a UnaryOp after refusing attributes not in `known`.
template <class Types, class Fn>
Result<std::unique_ptr<Op>> make_unary(const graph::Node& node, Fn fn, std::initializer_list<const char*> known = {}) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, known));
  return std::unique_ptr<Op>(new UnaryOp<Types, Fn>(node.op_type, std::move(fn)));
}

}  // namespace glassbox::ops
