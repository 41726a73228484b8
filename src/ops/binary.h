// One generic op for elementwise binary functions with multidirectional
// broadcasting: both inputs share a dtype; output dtype = fn's return type.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"
#include "ops/legacy_broadcast.h"

namespace glassbox::ops {

inline Status same_dtype(const ComputeContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return {};
  return op_error(ctx, ErrorCode::kInvalidArgument,
                  std::string("inputs have different dtypes: ") + dtype_name(a.dtype()) + " and " +
                      dtype_name(b.dtype()));
}

template <class Types, class Fn>
class BinaryOp final : public Op {
 public:
  BinaryOp(std::string op_type, Fn fn, LegacyBroadcast legacy = {})
      : op_type_(std::move(op_type)), fn_(std::move(fn)), legacy_(legacy) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    GB_RETURN_IF_ERROR(same_dtype(ctx, *a, *b));
    Tensor b_view;
    if (legacy_.active) {  // opset <= 6: B broadcasts to A only as the node's attributes say
      GB_ASSIGN_OR_RETURN(b_view, legacy_.adapt(ctx, *a, *b, "B"));
      b = &b_view;
    }
    GB_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a->shape(), b->shape()));
    return dispatch_dtype<Types>(a->dtype(), op_type_, [&]<class T>() -> Status {
      using Out = std::invoke_result_t<const Fn&, T, T>;
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<Out>(), shape));
      parallel_binary<T, T, Out>(ctx.pool(), *a, *b, *y, fn_);
      return {};
    });
  }

 private:
  std::string op_type_;
  Fn fn_;
  LegacyBroadcast legacy_;
};

template <class Types, class Fn>
Result<std::unique_ptr<Op>> make_binary(const graph::Node& node, Fn fn, std::initializer_list<const char*> known = {}) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, known));
  return std::unique_ptr<Op>(new BinaryOp<Types, Fn>(node.op_type, std::move(fn)));
}

// Add/Sub/Mul/Div: before opset 7 they carry the `broadcast`/`axis` attributes (legacy_broadcast.h).
template <class Types, class Fn>
Result<std::unique_ptr<Op>> make_arithmetic(const graph::Node& node, int64_t opset, Fn fn) {
  if (opset < 7) GB_RETURN_IF_ERROR(check_known_attrs(node, {"broadcast", "axis"}));
  else GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  GB_ASSIGN_OR_RETURN(LegacyBroadcast legacy, LegacyBroadcast::from(node, opset));
  return std::unique_ptr<Op>(new BinaryOp<Types, Fn>(node.op_type, std::move(fn), legacy));
}

}  // namespace glassbox::ops
