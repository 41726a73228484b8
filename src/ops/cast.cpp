// Cast (to = target dtype attribute) and CastLike (target dtype of input 1).
// Conversions: all fixed-size dtypes incl. float16/bfloat16 (through float).
// Float -> integer saturates and maps NaN to 0 (the spec leaves out-of-range
// undefined; saturation keeps it deterministic). Strings are refused.
// Float -> bfloat16 rounds to nearest even. Cast-13 (the spec in ONNX 1.12) does
// not say how to round (onnx/onnx#3876); RNE is IEEE's default, what ONNX's own
// helper.float32_to_bfloat16 does by default and what onnxruntime does. The 1.12
// test data truncate instead (they keep the upper 16 bits), so
// test_cast_FLOAT_to_BFLOAT16 is a listed known divergence (make_excluded.py).
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/attr_util.h"
#include "ops/dtype_dispatch.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Float16>) return kernels::half_to_float(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return kernels::bfloat16_to_float(v);
  else return static_cast<double>(v);
}

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, Float16>) {
    return kernels::float_to_half(static_cast<float>(to_double(v)));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return kernels::float_to_bfloat16(static_cast<float>(to_double(v)));
  } else if constexpr (std::is_same_v<To, bool>) {
    return to_double(v) != 0.0;
  } else if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>) {
    return convert<To>(static_cast<float>(to_double(v)));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

Status cast_tensor(ComputeContext& ctx, const Tensor& x, DataType to) {
  return dispatch_dtype<AllTypes>(x.dtype(), "Cast input", [&]<class From>() -> Status {
    return dispatch_dtype<AllTypes>(to, "Cast target", [&]<class To>() -> Status {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.shape()));
      parallel_unary(ctx.pool(), x.data<From>(), y->mutable_data<To>(), x.numel(),
                     [](From v) { return convert<To, From>(v); });
      return {};
    });
  });
}

Status refuse_string(DataType dt) {
  if (dt == DataType::kString)
    return make_error(ErrorCode::kUnsupported, "Cast from/to string is not implemented", {},
                      "do string conversion outside the model");
  return {};
}

struct CastAttrs {
  int64_t to = 0;  // required: target TensorProto.DataType
  int64_t saturate = 1;  // opset 19 (float8 only); accepted for completeness
};

class CastOp final : public Op {
 public:
  explicit CastOp(DataType to) : to_(to) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    GB_RETURN_IF_ERROR(refuse_string(x->dtype()));
    return cast_tensor(ctx, *x, to_);
  }

 private:
  DataType to_;
};

class CastLikeOp final : public Op {
 public:
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* like, require_input(ctx, 1, "target_type"));
    GB_RETURN_IF_ERROR(refuse_string(x->dtype()));
    GB_RETURN_IF_ERROR(refuse_string(like->dtype()));
    return cast_tensor(ctx, *x, like->dtype());
  }
};

}  // namespace

Result<std::unique_ptr<Op>> create_Cast(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"to"}));
  CastAttrs a;
  GB_ASSIGN_OR_RETURN(a.to, attr_int_required(node, "to"));
  if (!dtype_is_valid(static_cast<int32_t>(a.to)))
    return make_error(ErrorCode::kInvalidModel, "attribute 'to' = " + std::to_string(a.to) + " is not a dtype");
  const DataType to = static_cast<DataType>(a.to);
  GB_RETURN_IF_ERROR(refuse_string(to));
  if (!dtype_in(to, AllTypes{})) return unsupported_attr("to", std::string("cast to ") + dtype_name(to));
  return std::unique_ptr<Op>(new CastOp(to));
}

Result<std::unique_ptr<Op>> create_CastLike(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {}));
  return std::unique_ptr<Op>(new CastLikeOp());
}

}  // namespace glassbox::ops
