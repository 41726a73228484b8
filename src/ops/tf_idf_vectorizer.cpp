// TfIdfVectorizer (opset 9+), integer inputs (int32/int64; string pools are
// refused). For each row, counts the pool's n-grams of length
// [min_gram_length, max_gram_length] whose items are skip+1 apart, for every
// skip in [0, max_skip_count]; unigrams are counted once (skip does not apply).
// Output float32 [max(ngram_indexes) + 1] (1-D input) or [rows, that] (2-D).
#include <algorithm>
#include <map>
#include <vector>

#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

enum class TfIdfMode { kTF, kIDF, kTFIDF };

struct TfIdfVectorizerAttrs {
  int64_t max_gram_length = 0;         // longest n-gram counted (required)
  int64_t min_gram_length = 0;         // shortest n-gram counted (required)
  int64_t max_skip_count = 0;          // items skipped between n-gram items (required)
  TfIdfMode mode = TfIdfMode::kTF;     // "TF" | "IDF" | "TFIDF" (required)
  std::vector<int64_t> ngram_counts;   // start offset in the pool of the n-grams of length i+1 (required)
  std::vector<int64_t> ngram_indexes;  // output position of each pool n-gram (required)
  std::vector<int64_t> pool_int64s;    // the n-grams, grouped by length
  std::vector<float> weights;          // per pool n-gram weight for IDF/TFIDF (default 1)
};

class TfIdfVectorizerOp final : public Op {
 public:
  TfIdfVectorizerOp(TfIdfVectorizerAttrs a, std::vector<std::map<std::vector<int64_t>, int64_t>> pool, int64_t width)
      : a_(std::move(a)), pool_(std::move(pool)), width_(width) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, require_input(ctx, 0, "X"));
    if (x->rank() != 1 && x->rank() != 2)
      return op_error(ctx, ErrorCode::kInvalidArgument, "X must have rank 1 or 2, got " + shape_to_string(x->shape()));
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> items, tensor_to_int64s(*x, "X"));
    const int64_t rows = x->rank() == 2 ? x->shape()[0] : 1;
    const int64_t len = x->shape().back();
    Shape out_shape = x->rank() == 2 ? Shape{rows, width_} : Shape{width_};
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    float* py = y->mutable_data<float>();
    std::fill(py, py + y->numel(), 0.f);
    std::vector<int64_t> gram;
    std::vector<int64_t> count(a_.ngram_indexes.size());
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t* row = items.data() + r * len;
      float* out = py + r * width_;
      std::fill(count.begin(), count.end(), 0);
      for (int64_t n = a_.min_gram_length; n <= a_.max_gram_length; ++n) {
        const auto& grams = pool_[static_cast<size_t>(n - 1)];
        if (grams.empty()) continue;
        const int64_t max_skip = n == 1 ? 0 : a_.max_skip_count;
        for (int64_t skip = 0; skip <= max_skip; ++skip) {
          const int64_t step = skip + 1;
          for (int64_t s = 0; s + (n - 1) * step < len; ++s) {
            gram.clear();
            for (int64_t j = 0; j < n; ++j) gram.push_back(row[s + j * step]);
            auto it = grams.find(gram);
            if (it != grams.end()) ++count[static_cast<size_t>(it->second)];
          }
        }
      }
      for (size_t g = 0; g < count.size(); ++g) {
        const float w = a_.weights.empty() ? 1.f : a_.weights[g];
        const float tf = static_cast<float>(count[g]);
        out[a_.ngram_indexes[g]] += a_.mode == TfIdfMode::kTF ? tf : a_.mode == TfIdfMode::kIDF ? (tf > 0.f ? w : 0.f) : tf * w;
      }
    }
    return {};
  }

 private:
  TfIdfVectorizerAttrs a_;
  std::vector<std::map<std::vector<int64_t>, int64_t>> pool_;  // per length: n-gram -> pool n-gram number
  int64_t width_;
};

Error bad(const std::string& what) {
  return make_error(ErrorCode::kInvalidModel, "TfIdfVectorizer: " + what, {},
                    "fix the attributes; see the ONNX TfIdfVectorizer spec");
}

}  // namespace

Result<std::unique_ptr<Op>> create_TfIdfVectorizer(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"max_gram_length", "min_gram_length", "max_skip_count", "mode",
                                              "ngram_counts", "ngram_indexes", "pool_int64s", "pool_strings",
                                              "weights"}));
  if (node.attr("pool_strings"))
    return unsupported_attr("pool_strings", "string inputs are not supported (string tensors are out of scope)");
  TfIdfVectorizerAttrs a;
  GB_ASSIGN_OR_RETURN(a.max_gram_length, attr_int_required(node, "max_gram_length"));
  GB_ASSIGN_OR_RETURN(a.min_gram_length, attr_int_required(node, "min_gram_length"));
  GB_ASSIGN_OR_RETURN(a.max_skip_count, attr_int_required(node, "max_skip_count"));
  GB_ASSIGN_OR_RETURN(std::string mode, attr_string(node, "mode", ""));
  if (mode == "TF") a.mode = TfIdfMode::kTF;
  else if (mode == "IDF") a.mode = TfIdfMode::kIDF;
  else if (mode == "TFIDF") a.mode = TfIdfMode::kTFIDF;
  else return unsupported_attr("mode", "'" + mode + "' is not TF, IDF or TFIDF");
  GB_ASSIGN_OR_RETURN(auto counts, attr_ints(node, "ngram_counts"));
  GB_ASSIGN_OR_RETURN(auto indexes, attr_ints(node, "ngram_indexes"));
  GB_ASSIGN_OR_RETURN(auto pool, attr_ints(node, "pool_int64s"));
  GB_ASSIGN_OR_RETURN(auto weights, attr_floats(node, "weights"));
  if (!counts || !indexes || !pool) return bad("ngram_counts, ngram_indexes and pool_int64s are required");
  a.ngram_counts = *counts;
  a.ngram_indexes = *indexes;
  a.pool_int64s = *pool;
  if (weights) a.weights = *weights;
  if (a.min_gram_length < 1 || a.max_gram_length < a.min_gram_length || a.max_skip_count < 0)
    return bad("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  if (static_cast<int64_t>(a.ngram_counts.size()) > a.max_gram_length)
    return bad("ngram_counts has more entries than max_gram_length");
  // Split the pool into n-grams of each length.
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams(static_cast<size_t>(a.max_gram_length));
  const int64_t pool_size = static_cast<int64_t>(a.pool_int64s.size());
  int64_t number = 0;
  for (size_t i = 0; i < a.ngram_counts.size(); ++i) {
    const int64_t start = a.ngram_counts[i];
    const int64_t end = i + 1 < a.ngram_counts.size() ? a.ngram_counts[i + 1] : pool_size;
    const int64_t n = static_cast<int64_t>(i) + 1;
    if (start < 0 || end < start || end > pool_size || (end - start) % n != 0)
      return bad("ngram_counts entry " + std::to_string(i) + " does not split pool_int64s into " + std::to_string(n) +
                 "-grams");
    for (int64_t p = start; p < end; p += n, ++number)
      grams[i].emplace(std::vector<int64_t>(a.pool_int64s.begin() + p, a.pool_int64s.begin() + p + n), number);
  }
  if (static_cast<int64_t>(a.ngram_indexes.size()) != number)
    return bad("ngram_indexes has " + std::to_string(a.ngram_indexes.size()) + " entries for " +
               std::to_string(number) + " pool n-grams");
  if (!a.weights.empty() && a.weights.size() != a.ngram_indexes.size())
    return bad("weights must have one entry per pool n-gram");
  int64_t width = 0;
  for (int64_t ix : a.ngram_indexes) {
    if (ix < 0 || ix > (int64_t{1} << 31)) return bad("ngram_indexes entry " + std::to_string(ix) + " is out of range");
    width = std::max(width, ix + 1);
  }
  return std::unique_ptr<Op>(new TfIdfVectorizerOp(std::move(a), std::move(grams), width));
}

}  // namespace glassbox::ops
