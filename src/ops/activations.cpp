// Elementwise activation ops: a typed attribute struct where the op has
// attributes (ONNX names and spec defaults), then one scalar function each.
#include <algorithm>
#include <cmath>

#include "kernels/vmath.h"
#include "ops/unary.h"

namespace glassbox::ops {
namespace {

// Numerically stable log(1 + exp(x)).
template <class T>
T softplus(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Stable logistic: never exponentiates a large positive number.
template <class T>
T sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

}  // namespace

Result<std::unique_ptr<Op>> create_Relu(const graph::Node& node, int64_t) {
  // opset 14 added signed integer types. `x < 0 ? 0 : x`, not `x > 0 ? x : 0`: a NaN fails every
  // comparison, so it takes the branch that returns it (as ONNX Runtime does).
  return make_unary<SignedNumericTypes>(node, [](auto x) -> decltype(x) { return x < 0 ? decltype(x)(0) : x; });
}

Result<std::unique_ptr<Op>> create_Tanh(const graph::Node& node, int64_t) {
  return make_unary<FloatTypes>(node, [](auto x) -> decltype(x) { return std::tanh(x); }, {}, kernels::vtanh_f32);
}

Result<std::unique_ptr<Op>> create_Sigmoid(const graph::Node& node, int64_t) {
  return make_unary<FloatTypes>(node, [](auto x) -> decltype(x) { return sigmoid(x); }, {}, kernels::vsigmoid_f32);
}

Result<std::unique_ptr<Op>> create_Softplus(const graph::Node& node, int64_t) {
  return make_unary<FloatTypes>(node, [](auto x) -> decltype(x) { return softplus(x); });
}

Result<std::unique_ptr<Op>> create_Softsign(const graph::Node& node, int64_t) {
  return make_unary<FloatTypes>(node, [](auto x) -> decltype(x) { return x / (1 + std::fabs(x)); });
}

Result<std::unique_ptr<Op>> create_HardSwish(const graph::Node& node, int64_t) {
  // std::min(v, 1) / std::max(v, 0) return v when v is NaN (the bound as first operand would win).
  return make_unary<FloatTypes>(node, [](auto x) -> decltype(x) {
    return x * std::max<decltype(x)>(std::min<decltype(x)>(x / 6 + decltype(x)(0.5), 1), 0);
  });
}

struct LeakyReluAttrs {
  float alpha = 0.01f;  // slope for x < 0
};
Result<std::unique_ptr<Op>> create_LeakyRelu(const graph::Node& node, int64_t) {
  LeakyReluAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  return make_unary<FloatTypes>(
      node, [a](auto x) -> decltype(x) { return x < 0 ? decltype(x)(a.alpha) * x : x; }, {"alpha"});
}

struct EluAttrs {
  float alpha = 1.0f;  // scale of the negative part alpha * (exp(x) - 1)
};
Result<std::unique_ptr<Op>> create_Elu(const graph::Node& node, int64_t) {
  EluAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  return make_unary<FloatTypes>(
      node, [a](auto x) -> decltype(x) { return x < 0 ? decltype(x)(a.alpha) * std::expm1(x) : x; }, {"alpha"});
}

struct SeluAttrs {
  float alpha = 1.67326319217681884765625f;  // negative-part coefficient
  float gamma = 1.05070102214813232421875f;  // output scale
};
Result<std::unique_ptr<Op>> create_Selu(const graph::Node& node, int64_t) {
  SeluAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  GB_ASSIGN_OR_RETURN(a.gamma, attr_float(node, "gamma", a.gamma));
  return make_unary<FloatTypes>(
      node,
      [a](auto x) -> decltype(x) {
        using T = decltype(x);
        return x > 0 ? T(a.gamma) * x : T(a.gamma) * (T(a.alpha) * std::exp(x) - T(a.alpha));
      },
      {"alpha", "gamma"});
}

struct CeluAttrs {
  float alpha = 1.0f;  // max(0,x) + min(0, alpha * (exp(x / alpha) - 1))
};
Result<std::unique_ptr<Op>> create_Celu(const graph::Node& node, int64_t) {
  CeluAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  if (a.alpha == 0.f) return unsupported_attr("alpha", "must be non-zero (it divides x)");
  return make_unary<TypeList<float>>(
      node,
      // max(0, x) + min(0, alpha * expm1(x / alpha)) by branch: x > 0 gives x + 0, else the second term
      // (<= 0); a NaN takes the second branch and stays NaN.
      [a](float x) -> float { return x > 0 ? x : a.alpha * std::expm1(x / a.alpha); },
      {"alpha"});
}

struct HardSigmoidAttrs {
  float alpha = 0.2f;  // slope
  float beta = 0.5f;   // offset: max(0, min(1, alpha * x + beta))
};
Result<std::unique_ptr<Op>> create_HardSigmoid(const graph::Node& node, int64_t) {
  HardSigmoidAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  GB_ASSIGN_OR_RETURN(a.beta, attr_float(node, "beta", a.beta));
  return make_unary<FloatTypes>(
      node,
      [a](auto x) -> decltype(x) {
        using T = decltype(x);
        return std::max<T>(std::min<T>(T(a.alpha) * x + T(a.beta), 1), 0);  // NaN stays NaN (see HardSwish)
      },
      {"alpha", "beta"});
}

struct ThresholdedReluAttrs {
  float alpha = 1.0f;  // y = x if x > alpha else 0
};
Result<std::unique_ptr<Op>> create_ThresholdedRelu(const graph::Node& node, int64_t) {
  ThresholdedReluAttrs a;
  GB_ASSIGN_OR_RETURN(a.alpha, attr_float(node, "alpha", a.alpha));
  return make_unary<FloatTypes>(
      node, [a](auto x) -> decltype(x) { return x > decltype(x)(a.alpha) ? x : decltype(x)(0); }, {"alpha"});
}

}  // namespace glassbox::ops

namespace glassbox::ops {

struct ShrinkAttrs {
  float bias = 0.0f;   // added/subtracted outside the band
  float lambd = 0.5f;  // half-width of the zero band
};
// Shrink (opset 9): x < -lambd ? x + bias : (x > lambd ? x - bias : 0).
Result<std::unique_ptr<Op>> create_Shrink(const graph::Node& node, int64_t) {
  ShrinkAttrs a;
  GB_ASSIGN_OR_RETURN(a.bias, attr_float(node, "bias", a.bias));
  GB_ASSIGN_OR_RETURN(a.lambd, attr_float(node, "lambd", a.lambd));
  return make_unary<NumericTypes>(
      node,
      [a](auto x) -> decltype(x) {
        using T = decltype(x);
        const double v = static_cast<double>(x);
        if (v < -a.lambd) return static_cast<T>(v + a.bias);
        if (v > a.lambd) return static_cast<T>(v - a.bias);
        return T(0);
      },
      {"bias", "lambd"});
}

}  // namespace glassbox::ops
