// Shared by SVMClassifier and SVMRegressor: kernel_type / kernel_params and the kernel
// value K(x, sv) (sums in double, rounded to float once).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "ops/ml/ml_common.h"

namespace glassbox::ops::ml {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct SvmKernelParams {
  SvmKernel kernel = SvmKernel::kLinear;  // kernel_type: LINEAR | POLY | RBF | SIGMOID (default LINEAR)
  float gamma = 0.f;                      // kernel_params[0]
  float coef0 = 0.f;                      // kernel_params[1]
  float degree = 0.f;                     // kernel_params[2]
};

inline Result<SvmKernelParams> parse_svm_kernel(const graph::Node& node) {
  SvmKernelParams p;
  GB_ASSIGN_OR_RETURN(std::string k, attr_string(node, "kernel_type", "LINEAR"));
  if (k == "LINEAR") p.kernel = SvmKernel::kLinear;
  else if (k == "POLY") p.kernel = SvmKernel::kPoly;
  else if (k == "RBF") p.kernel = SvmKernel::kRbf;
  else if (k == "SIGMOID") p.kernel = SvmKernel::kSigmoid;
  else return bad_attr("kernel_type '" + k + "' is not one of LINEAR, POLY, RBF, SIGMOID");
  GB_ASSIGN_OR_RETURN(auto kp, attr_floats_or_empty(node, "kernel_params"));
  if (!kp.empty() && kp.size() != 3)
    return bad_attr("kernel_params has " + std::to_string(kp.size()) + " entries, expected 3 (gamma, coef0, degree)");
  if (kp.size() == 3) {
    p.gamma = kp[0];
    p.coef0 = kp[1];
    p.degree = kp[2];
  }
  return p;
}

inline float svm_kernel(const SvmKernelParams& p, const float* x, const float* sv, int64_t n) {
  double s = 0.0;
  if (p.kernel == SvmKernel::kRbf) {
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - sv[i];
      s += d * d;
    }
    return static_cast<float>(std::exp(-static_cast<double>(p.gamma) * s));
  }
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * sv[i];
  if (p.kernel == SvmKernel::kLinear) return static_cast<float>(s);
  const double v = static_cast<double>(p.gamma) * s + p.coef0;
  return static_cast<float>(p.kernel == SvmKernel::kPoly ? std::pow(v, static_cast<double>(p.degree)) : std::tanh(v));
}

}  // namespace glassbox::ops::ml
