// Shared by the ai.onnx.ml ops (src/ops/ml/): list attributes, post_transform,
// and reading numeric inputs as float32 (the ml ops compute in float, as their
// float attributes are float32). Score transforms follow the de-facto reference,
// onnxruntime's ml_common.h formulas, so outputs agree to the last bits we can.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops::ml {

inline Error bad_attr(const std::string& what, const std::string& fix = "re-export the model") {
  return make_error(ErrorCode::kInvalidModel, what, {}, fix);
}

inline Result<std::vector<std::string>> attr_strings(const graph::Node& node, const std::string& name) {
  const graph::Attribute* a = node.attr(name);
  if (!a) return std::vector<std::string>{};
  if (a->type != graph::AttrType::kStrings) return attr_type_error(*a, graph::AttrType::kStrings);
  return a->strings;
}

inline Result<std::vector<int64_t>> attr_ints_or_empty(const graph::Node& node, const std::string& name) {
  GB_ASSIGN_OR_RETURN(auto v, attr_ints(node, name));
  return v ? *v : std::vector<int64_t>{};
}

inline Result<std::vector<float>> attr_floats_or_empty(const graph::Node& node, const std::string& name) {
  GB_ASSIGN_OR_RETURN(auto v, attr_floats(node, name));
  return v ? *v : std::vector<float>{};
}

// Attributes that hold double-precision variants (`*_as_tensor`) or strings are refused by name.
inline Status refuse_present(const graph::Node& node, std::initializer_list<const char*> names, const std::string& why) {
  for (const char* n : names)
    if (node.attr(n)) return unsupported_attr(n, why);
  return {};
}

// A classifier's class labels: `ints_name` (classlabels_int64s / classlabels_ints) or
// classlabels_strings, exactly one. `ids` is what the op computes with: the int64 labels, or
// for string labels the indices 0..K-1 (so every rule written for int labels applies, as in
// onnxruntime); `strings` is non-empty for string labels (Y is then a string tensor).
struct ClassLabels {
  std::vector<int64_t> ids;
  std::vector<std::string> strings;
};

inline Result<ClassLabels> parse_class_labels(const graph::Node& node, const std::string& ints_name) {
  ClassLabels cl;
  GB_ASSIGN_OR_RETURN(cl.ids, attr_ints_or_empty(node, ints_name));
  GB_ASSIGN_OR_RETURN(cl.strings, attr_strings(node, "classlabels_strings"));
  if (!cl.ids.empty() && !cl.strings.empty())
    return bad_attr(ints_name + " and classlabels_strings are both given (" + std::to_string(cl.ids.size()) + " and " +
                    std::to_string(cl.strings.size()) + " labels); exactly one may be");
  if (!cl.strings.empty()) {
    cl.ids.resize(cl.strings.size());
    for (size_t i = 0; i < cl.ids.size(); ++i) cl.ids[i] = static_cast<int64_t>(i);
  }
  return cl;
}

// Y of a classifier, [rows]: int64 labels written in place, or, for string labels, label
// indices written to scratch and turned into a string tensor by finish().
class LabelOutput {
 public:
  static Result<LabelOutput> begin(ComputeContext& ctx, const std::vector<std::string>& strings, int64_t rows) {
    LabelOutput o;
    o.strings_ = &strings;
    o.rows_ = rows;
    if (strings.empty()) {
      GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {rows}));
      o.ids_ = y->mutable_data<int64_t>();
    } else {
      GB_ASSIGN_OR_RETURN(o.scratch_, ctx.allocate_scratch(DataType::kInt64, {rows}));
      o.ids_ = o.scratch_.mutable_data<int64_t>();
    }
    return o;
  }
  int64_t* ids() { return ids_; }
  Status finish(ComputeContext& ctx) {
    if (strings_->empty()) return {};
    std::vector<std::string> out(static_cast<size_t>(rows_));
    for (int64_t r = 0; r < rows_; ++r) out[r] = (*strings_)[static_cast<size_t>(ids_[r])];
    return ctx.set_output_strings(0, {rows_}, std::move(out));
  }

 private:
  const std::vector<std::string>* strings_ = nullptr;
  int64_t rows_ = 0;
  int64_t* ids_ = nullptr;
  Tensor scratch_;
};

enum class PostTransform { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };

inline Result<PostTransform> parse_post_transform(const graph::Node& node) {
  GB_ASSIGN_OR_RETURN(std::string s, attr_string(node, "post_transform", "NONE"));
  if (s == "NONE") return PostTransform::kNone;
  if (s == "LOGISTIC") return PostTransform::kLogistic;
  if (s == "SOFTMAX") return PostTransform::kSoftmax;
  if (s == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (s == "PROBIT") return PostTransform::kProbit;
  return bad_attr("post_transform '" + s + "' is not one of NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT");
}

inline Error refuse_probit() {
  return unsupported_attr("post_transform", "PROBIT is not implemented (the reference uses an erfinv approximation "
                                            "whose digits we would have to mirror)");
}

// 1 / (1 + e^-x) computed on |x| so large inputs do not overflow.
inline float logistic(float v) {
  const float e = 1.f / (1.f + std::exp(-std::fabs(v)));
  return v < 0 ? 1.f - e : e;
}

inline void softmax_inplace(float* s, int64_t n) {
  float m = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) m = s[i] > m ? s[i] : m;
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    s[i] = std::exp(s[i] - m);
    sum += s[i];
  }
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

// Like softmax, but (near-)zero scores stay zero-weighted: "absent" classes get no mass.
inline void softmax_zero_inplace(float* s, int64_t n) {
  float m = -std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) m = s[i] > m ? s[i] : m;
  const float exp_neg_max = std::exp(-m);
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    if (s[i] > 1e-7f || s[i] < -1e-7f) {
      s[i] = std::exp(s[i] - m);
      sum += s[i];
    } else {
      s[i] *= exp_neg_max;
    }
  }
  for (int64_t i = 0; i < n; ++i) s[i] /= sum;
}

// Applies a row transform to n >= 2 scores (PROBIT is refused at load).
inline void transform_row(PostTransform t, float* s, int64_t n) {
  switch (t) {
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) s[i] = logistic(s[i]);
      break;
    case PostTransform::kSoftmax: softmax_inplace(s, n); break;
    case PostTransform::kSoftmaxZero: softmax_zero_inplace(s, n); break;
    case PostTransform::kNone:
    case PostTransform::kProbit: break;
  }
}

// A numeric input as a [rows, cols] float32 matrix: a view of X when it is float32, else a
// converted copy (double/int64/int32 -> float, as ONNX ML ops compute in float). Rank 1
// [C] is one row; rank 2 [N, C] is N rows; other ranks are refused.
struct FloatMatrix {
  const float* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  Tensor storage;  // owns the converted copy
};

inline Result<FloatMatrix> input_as_float_matrix(ComputeContext& ctx, const Tensor& x, const char* what) {
  if (x.rank() != 1 && x.rank() != 2)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(what) + " must have rank 1 or 2, got " + shape_to_string(x.shape()));
  FloatMatrix m;
  m.rows = x.rank() == 2 ? x.shape()[0] : 1;
  m.cols = x.shape().back();
  if (x.dtype() == DataType::kFloat32) {
    m.data = x.data<float>();
    return m;
  }
  GB_ASSIGN_OR_RETURN(m.storage, ctx.allocate_scratch(DataType::kFloat32, {m.rows, m.cols}));
  float* out = m.storage.mutable_data<float>();
  const int64_t n = x.numel();
  switch (x.dtype()) {
    case DataType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x.data<double>()[i]);
      break;
    case DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x.data<int64_t>()[i]);
      break;
    case DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x.data<int32_t>()[i]);
      break;
    default:
      return op_error(ctx, ErrorCode::kUnsupported,
                      std::string(what) + " has dtype " + dtype_name(x.dtype()) + "; float32, float64, int64 and int32 are supported");
  }
  m.data = out;
  return m;
}

}  // namespace glassbox::ops::ml
