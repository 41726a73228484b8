// Rerank with a cross-encoder: each (query, document) pair through the classify pipeline, one
// logit per pair, the model's declared score function, sorted by score (stable: ties keep the
// documents' order). Truncation, when asked for, cuts only the document.
#include <algorithm>
#include <cmath>

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
    in.truncation_strategy = TruncationStrategy::kOnlySecond;
    in.truncation_direction = options.direction;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

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
    ranked.push_back(r);
  }
  // NaN scores sort last (the run would have reported non-finite outputs already).
  std::stable_sort(ranked.begin(), ranked.end(), [](const RankedDocument& a, const RankedDocument& b) {
    if (std::isnan(a.score) || std::isnan(b.score)) return !std::isnan(a.score) && std::isnan(b.score);
    return a.score > b.score;
  });
  if (options.top_n && *options.top_n < ranked.size()) ranked.resize(*options.top_n);
  return ranked;
}

Result<std::vector<RankedDocument>> rerank(const Pipeline& pipeline, const std::string& query,
                                           const std::vector<std::string>& documents, const RerankOptions& options) {
  if (pipeline.decisions().task != PipelineTask::kClassify)
    return make_error(ErrorCode::kInvalidArgument, "rerank needs a cross-encoder; this model directory is an embedding model",
                      "rerank", "embed the query and the documents and compare the vectors (similarity), or use a cross-encoder");
  std::vector<PipelineInput> inputs = rerank_inputs(query, documents, options);
  auto scored = pipeline.classify(inputs, 1);
  if (!scored.ok()) return std::move(scored).take_error();
  return rank_documents(pipeline, *scored, options);
}

}  // namespace glassbox
