// Rerank with a cross-encoder: each (query, document) pair through the classify pipeline, one
// logit per pair, the model's declared score function, sorted by score (stable: ties keep the
// documents' order). Truncation, when asked for, cuts only the document.
#include <algorithm>
#include <cmath>

#include "glassbox/late_interaction.h"
#include "glassbox/pipeline.h"

namespace glassbox {

std::vector<PipelineInput> rerank_inputs(const std::string& query, const std::vector<std::string>& documents,
                                         const RerankOptions& options) {
  std::vector<PipelineInput> inputs;
  inputs.reserve(documents.size());
  for (const auto& doc : documents) {
    PipelineInput in;
    in.text = query;
    in.pair = doc;
    in.allow_truncation = options.truncate;
    in.split_windows = options.split;
    in.truncation_strategy = TruncationStrategy::kOnlySecond;
    in.truncation_direction = options.direction;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

namespace {

// Best score first, NaN scores last (the run has reported non-finite outputs already), cut to top_n.
std::vector<RankedDocument> best_first(std::vector<RankedDocument> ranked, const RerankOptions& options) {
  std::stable_sort(ranked.begin(), ranked.end(), [](const RankedDocument& a, const RankedDocument& b) {
    if (std::isnan(a.score) || std::isnan(b.score)) return !std::isnan(a.score) && std::isnan(b.score);
    return a.score > b.score;
  });
  if (options.top_n && *options.top_n < ranked.size()) ranked.resize(*options.top_n);
  return ranked;
}

}  // namespace

Result<std::vector<RankedDocument>> rank_documents(const Pipeline& pipeline, const std::vector<Classification>& scored,
                                                   const RerankOptions& options) {
  const auto& dec = pipeline.decisions();
  if (dec.labels.size() != 1)
    return make_error(ErrorCode::kInvalidArgument,
                      "rerank needs a cross-encoder with one logit per pair; this model has " + std::to_string(dec.labels.size()) +
                          " labels",
                      "rerank", "use a cross-encoder (num_labels 1), or `classify` with text pairs for a pair classifier");
  std::vector<RankedDocument> ranked;
  ranked.reserve(scored.size());
  for (size_t i = 0; i < scored.size(); ++i) {
    const Classification& c = scored[i];
    if (c.logits.size() != 1 || c.labels.empty())
      return make_error(ErrorCode::kInternal, "a pair's result holds no score", "rerank document " + std::to_string(i));
    RankedDocument r;
    r.index = i;
    r.logit = c.logits[0];
    r.score = options.raw_scores ? r.logit : c.labels[0].score;
    r.tokens = c.tokens;
    r.tokens_dropped = c.tokens_dropped;
    r.windows = c.windows;
    ranked.push_back(r);
  }
  return best_first(std::move(ranked), options);
}

Result<double> max_sim(const std::vector<float>& query, const std::vector<float>& document, int64_t dim) {
  if (dim <= 0 || query.size() % static_cast<size_t>(dim) != 0 || document.size() % static_cast<size_t>(dim) != 0)
    return make_error(ErrorCode::kInvalidArgument,
                      "token vectors of " + std::to_string(query.size()) + " and " + std::to_string(document.size()) +
                          " values are not rows of " + std::to_string(dim),
                      "MaxSim");
  const size_t d = static_cast<size_t>(dim), nq = query.size() / d, nd = document.size() / d;
  double total = 0;
  for (size_t i = 0; i < nq; ++i) {
    double best = 0;  // a document without vectors adds 0 (PyLate masks its padding to 0)
    for (size_t j = 0; j < nd; ++j) {
      double dot = 0;
      for (size_t k = 0; k < d; ++k) dot += static_cast<double>(query[i * d + k]) * document[j * d + k];
      if (j == 0 || dot > best) best = dot;
    }
    total += best;
  }
  return total;
}

Result<std::vector<PipelineInput>> late_interaction_inputs(const std::string& query, const std::vector<std::string>& documents,
                                                           const RerankOptions& options) {
  if (options.split)
    return make_error(ErrorCode::kInvalidArgument, "split: a late-interaction model scores one document's vectors", "rerank",
                      "PyLate declares no way to join the vectors of windows: use truncate, or shorter documents");
  std::vector<PipelineInput> inputs(documents.size() + 1);
  inputs[0].text = query;
  inputs[0].query = true;
  for (size_t i = 0; i < documents.size(); ++i) {
    inputs[i + 1].text = documents[i];
    inputs[i + 1].allow_truncation = options.truncate;
    inputs[i + 1].truncation_direction = options.direction;
  }
  return inputs;
}

Result<std::vector<RankedDocument>> rank_by_max_sim(const std::vector<Embedding>& embedded, const RerankOptions& options) {
  if (embedded.empty() || embedded[0].vectors <= 0)
    return make_error(ErrorCode::kInternal, "the query has no token vectors", "rerank");
  const Embedding& q = embedded[0];
  const int64_t dim = static_cast<int64_t>(q.vector.size()) / q.vectors;
  std::vector<RankedDocument> ranked;
  for (size_t i = 1; i < embedded.size(); ++i) {
    GB_ASSIGN_OR_RETURN(double score, max_sim(q.vector, embedded[i].vector, dim));
    RankedDocument r;
    r.index = i - 1;
    r.score = r.logit = static_cast<float>(score);
    r.tokens = embedded[i].tokens;
    r.tokens_dropped = embedded[i].tokens_dropped;
    ranked.push_back(r);
  }
  return best_first(std::move(ranked), options);
}

Result<std::vector<RankedDocument>> rerank(const Pipeline& pipeline, const std::string& query,
                                           const std::vector<std::string>& documents, const RerankOptions& options) {
  if (pipeline.decisions().multi_vector) {  // late interaction: MaxSim of token vectors
    GB_ASSIGN_OR_RETURN(auto inputs, late_interaction_inputs(query, documents, options));
    GB_ASSIGN_OR_RETURN(auto embedded, pipeline.embed(inputs));
    return rank_by_max_sim(embedded, options);
  }
  if (pipeline.decisions().task != PipelineTask::kClassify)
    return make_error(ErrorCode::kInvalidArgument, "rerank needs a cross-encoder; this model directory is an embedding model",
                      "rerank", "embed the query and the documents and compare the vectors (similarity), or use a cross-encoder");
  std::vector<PipelineInput> inputs = rerank_inputs(query, documents, options);
  if (!options.split) {
    auto scored = pipeline.classify(inputs, 1);
    if (!scored.ok()) return std::move(scored).take_error();
    return rank_documents(pipeline, *scored, options);
  }
  // Split: every window of every document, in batches of the declared batch_size, then the best window per document.
  std::vector<EncodedText> windows;
  std::vector<size_t> source;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GB_ASSIGN_OR_RETURN(auto w, pipeline.encode_windows(inputs[i], i));
    for (auto& e : w) {
      windows.push_back(std::move(e));
      source.push_back(i);
    }
  }
  std::vector<Classification> per_window;
  const size_t step = static_cast<size_t>(std::max<int64_t>(1, pipeline.decisions().batch_size));
  for (size_t start = 0; start < windows.size(); start += step) {
    const std::vector<EncodedText> batch(windows.begin() + static_cast<std::ptrdiff_t>(start),
                                         windows.begin() + static_cast<std::ptrdiff_t>(std::min(windows.size(), start + step)));
    GB_ASSIGN_OR_RETURN(auto part, pipeline.classify_encoded(batch, 1));
    for (auto& c : part) per_window.push_back(std::move(c));
  }
  GB_ASSIGN_OR_RETURN(auto scored, max_over_windows(std::move(per_window), source, inputs.size()));
  return rank_documents(pipeline, scored, options);
}

Result<std::vector<Classification>> max_over_windows(std::vector<Classification> per_window, const std::vector<size_t>& source,
                                                     size_t inputs) {
  if (source.size() != per_window.size())
    return make_error(ErrorCode::kInternal, "windows and their sources differ in number", "max_over_windows");
  std::vector<Classification> out(inputs);
  std::vector<int64_t> tokens(inputs, 0), count(inputs, 0);
  for (size_t w = 0; w < per_window.size(); ++w) {
    const size_t i = source[w];
    if (i >= inputs || per_window[w].logits.empty())
      return make_error(ErrorCode::kInternal, "a window's source or score is missing", "max_over_windows");
    tokens[i] += per_window[w].tokens;
    // The first window wins ties; NaN never wins (the run reports it).
    if (count[i]++ == 0 || per_window[w].logits[0] > out[i].logits[0]) out[i] = std::move(per_window[w]);
  }
  for (size_t i = 0; i < inputs; ++i) {
    if (count[i] == 0) return make_error(ErrorCode::kInternal, "input " + std::to_string(i) + " has no window", "max_over_windows");
    out[i].tokens = tokens[i];
    out[i].tokens_dropped = 0;
    out[i].windows = count[i];
  }
  return out;
}

Result<double> vector_similarity(const std::string& function, const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return make_error(ErrorCode::kInvalidArgument,
                      "vectors of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " values cannot be compared",
                      "similarity");
  double dot = 0, aa = 0, bb = 0, l1 = 0, l2 = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double x = a[k], y = b[k];
    dot += x * y;
    aa += x * x;
    bb += y * y;
    l1 += std::fabs(x - y);
    l2 += (x - y) * (x - y);
  }
  if (function == "cosine") return dot / (std::max(std::sqrt(aa), 1e-12) * std::max(std::sqrt(bb), 1e-12));
  if (function == "dot") return dot;
  if (function == "euclidean") return -std::sqrt(l2);
  if (function == "manhattan") return -l1;
  return make_error(ErrorCode::kUnsupported, "similarity function '" + function + "' is not one glassbox computes", "similarity",
                    "declare cosine, dot, euclidean or manhattan (config_sentence_transformers.json similarity_fn_name)");
}

}  // namespace glassbox
