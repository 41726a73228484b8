// SVMClassifier (ai.onnx.ml 1-3), libsvm's one-vs-one SVC: X [N, F] -> Y int64 labels [N], Z.
// For classes i < j: d_ij = sum_{v in i} coef[j-1][v] K(x, v) + sum_{v in j} coef[i][v] K(x, v)
// + rho_ij; a vote goes to i when d_ij > 0, else j; Y = label with the most votes (first).
// Without prob_a/prob_b Z is the decision values: [N, K(K-1)/2], or [-d, d] for two classes.
// With them (Platt scaling): pairwise r_ij = 1 - logistic(d_ij A_ij + B_ij), clipped to
// [1e-7, 1 - 1e-7], coupled into K probabilities by libsvm's iterative method (Wu, Lin and
// Weng 2004), computed in float like onnxruntime; Y still comes from the votes.
// Refused: liblinear mode (no support vectors: export LinearSVC as LinearClassifier),
// post_transform other than NONE. String labels (classlabels_strings) give a string Y.
#include <algorithm>
#include <cmath>

#include "ops/ml/svm_common.h"

namespace glassbox::ops {
namespace {

struct SVMClassifierAttrs {
  ml::SvmKernelParams kernel;
  std::vector<int64_t> labels;             // classlabels_ints (K), or indices of classlabels_strings
  std::vector<std::string> label_strings;  // classlabels_strings (Y is then a string tensor)
  std::vector<int64_t> vectors_per_class;  // support vectors of each class, in order (K)
  std::vector<float> support_vectors;      // [V, F]
  std::vector<float> coefficients;         // [K-1, V] (libsvm sv_coef)
  std::vector<float> rho;                  // K(K-1)/2 offsets, pairs (0,1), (0,2), ..., (K-2, K-1)
  std::vector<float> prob_a, prob_b;       // Platt parameters per pair (both empty or both K(K-1)/2)
};

// libsvm's multiclass_probability on r (K x K, r[i][j] = P(i | i or j)), in float.
void couple(int64_t k, const std::vector<float>& r, float* p) {
  std::vector<float> q(static_cast<size_t>(k * k), 0.f), qp(static_cast<size_t>(k), 0.f);
  const float eps = 0.005f / static_cast<float>(k);
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  for (int iter = 0; iter < 100; ++iter) {
    float pqp = 0.f;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0.f;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0.f;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

class SVMClassifierOp final : public Op {
 public:
  explicit SVMClassifierOp(SVMClassifierAttrs a) : a_(std::move(a)) {
    int64_t s = 0;
    for (int64_t n : a_.vectors_per_class) {
      start_.push_back(s);
      s += n;
    }
    vectors_ = s;
    features_ = static_cast<int64_t>(a_.support_vectors.size()) / vectors_;
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    GB_ASSIGN_OR_RETURN(ml::FloatMatrix m, ml::input_as_float_matrix(ctx, *x, "X"));
    if (m.cols != features_)
      return op_error(ctx, ErrorCode::kInvalidArgument, "X has " + std::to_string(m.cols) +
                                                            " columns, the support vectors have " + std::to_string(features_));
    const int64_t k = static_cast<int64_t>(a_.labels.size()), pairs = k * (k - 1) / 2;
    const bool proba = !a_.prob_a.empty();
    const int64_t width = proba ? k : (k == 2 ? 2 : pairs);
    GB_ASSIGN_OR_RETURN(ml::LabelOutput y, ml::LabelOutput::begin(ctx, a_.label_strings, m.rows));
    GB_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat32, {m.rows, width}));
    int64_t* py = y.ids();
    float* pz = z->mutable_data<float>();
    ctx.pool().parallel_for(m.rows, 8, [&](int64_t b, int64_t e) {
      std::vector<float> kv(static_cast<size_t>(vectors_)), d(static_cast<size_t>(pairs)), r(static_cast<size_t>(k * k));
      std::vector<int64_t> votes(static_cast<size_t>(k));
      for (int64_t row = b; row < e; ++row) {
        const float* xr = m.data + row * features_;
        for (int64_t v = 0; v < vectors_; ++v)
          kv[v] = ml::svm_kernel(a_.kernel, xr, a_.support_vectors.data() + v * features_, features_);
        std::fill(votes.begin(), votes.end(), 0);
        int64_t p = 0;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = i + 1; j < k; ++j, ++p) {
            double s = a_.rho[p];
            for (int64_t v = 0; v < a_.vectors_per_class[i]; ++v)
              s += static_cast<double>(a_.coefficients[(j - 1) * vectors_ + start_[i] + v]) * kv[start_[i] + v];
            for (int64_t v = 0; v < a_.vectors_per_class[j]; ++v)
              s += static_cast<double>(a_.coefficients[i * vectors_ + start_[j] + v]) * kv[start_[j] + v];
            d[p] = static_cast<float>(s);
            ++votes[s > 0 ? i : j];
          }
        py[row] = a_.labels[std::max_element(votes.begin(), votes.end()) - votes.begin()];
        float* out = pz + row * width;
        if (!proba) {
          if (k == 2) {
            out[0] = -d[0];
            out[1] = d[0];
          } else {
            std::copy(d.begin(), d.end(), out);
          }
          continue;
        }
        p = 0;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = i + 1; j < k; ++j, ++p) {
            const float v = std::clamp(1.f - ml::logistic(d[p] * a_.prob_a[p] + a_.prob_b[p]), 1e-7f, 1 - 1e-7f);
            r[i * k + j] = v;
            r[j * k + i] = 1 - v;
          }
        couple(k, r, out);
      }
    });
    return y.finish(ctx);
  }

 private:
  SVMClassifierAttrs a_;
  std::vector<int64_t> start_;  // first support vector of each class
  int64_t vectors_ = 0;
  int64_t features_ = 0;
};

Status validate(const SVMClassifierAttrs& a) {
  const size_t k = a.labels.size();
  if (k < 2) return ml::bad_attr("classlabels_ints must list at least 2 classes");
  if (a.vectors_per_class.size() != k)
    return ml::bad_attr("vectors_per_class has " + std::to_string(a.vectors_per_class.size()) + " entries for " +
                        std::to_string(k) + " classes");
  int64_t v = 0;
  for (int64_t n : a.vectors_per_class) {
    if (n < 0) return ml::bad_attr("vectors_per_class has a negative entry");
    v += n;
  }
  if (v == 0)
    return unsupported_attr("vectors_per_class", "no support vectors (liblinear mode) is not supported; export a "
                                                 "linear SVM as LinearClassifier");
  if (a.support_vectors.empty() || a.support_vectors.size() % static_cast<size_t>(v) != 0)
    return ml::bad_attr("support_vectors has " + std::to_string(a.support_vectors.size()) +
                        " entries, not a non-empty multiple of the " + std::to_string(v) + " support vectors");
  if (a.coefficients.size() != (k - 1) * static_cast<size_t>(v))
    return ml::bad_attr("coefficients has " + std::to_string(a.coefficients.size()) + " entries, expected (classes - 1) x " +
                        "vectors = " + std::to_string((k - 1) * static_cast<size_t>(v)));
  const size_t pairs = k * (k - 1) / 2;
  if (a.rho.size() != pairs)
    return ml::bad_attr("rho has " + std::to_string(a.rho.size()) + " entries, expected one per class pair (" +
                        std::to_string(pairs) + ")");
  if (a.prob_a.size() != a.prob_b.size() || (!a.prob_a.empty() && a.prob_a.size() != pairs))
    return ml::bad_attr("prob_a / prob_b have " + std::to_string(a.prob_a.size()) + " / " + std::to_string(a.prob_b.size()) +
                        " entries; both must be empty or one per class pair (" + std::to_string(pairs) + ")");
  return {};
}

}  // namespace

Result<std::unique_ptr<Op>> create_ml_SVMClassifier(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"classlabels_ints", "classlabels_strings", "coefficients", "kernel_params",
                                              "kernel_type", "post_transform", "prob_a", "prob_b", "rho",
                                              "support_vectors", "vectors_per_class"}));
  SVMClassifierAttrs a;
  GB_ASSIGN_OR_RETURN(a.kernel, ml::parse_svm_kernel(node));
  GB_ASSIGN_OR_RETURN(ml::ClassLabels labels, ml::parse_class_labels(node, "classlabels_ints"));
  a.labels = std::move(labels.ids);
  a.label_strings = std::move(labels.strings);
  GB_ASSIGN_OR_RETURN(a.vectors_per_class, ml::attr_ints_or_empty(node, "vectors_per_class"));
  GB_ASSIGN_OR_RETURN(a.support_vectors, ml::attr_floats_or_empty(node, "support_vectors"));
  GB_ASSIGN_OR_RETURN(a.coefficients, ml::attr_floats_or_empty(node, "coefficients"));
  GB_ASSIGN_OR_RETURN(a.rho, ml::attr_floats_or_empty(node, "rho"));
  GB_ASSIGN_OR_RETURN(a.prob_a, ml::attr_floats_or_empty(node, "prob_a"));
  GB_ASSIGN_OR_RETURN(a.prob_b, ml::attr_floats_or_empty(node, "prob_b"));
  GB_ASSIGN_OR_RETURN(ml::PostTransform pt, ml::parse_post_transform(node));
  if (pt != ml::PostTransform::kNone) return unsupported_attr("post_transform", "SVMClassifier supports NONE only");
  GB_RETURN_IF_ERROR(validate(a));
  return std::unique_ptr<Op>(new SVMClassifierOp(std::move(a)));
}

}  // namespace glassbox::ops
