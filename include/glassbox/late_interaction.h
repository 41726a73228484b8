// Rerank with a multi-vector (ColBERT) model: the query and the documents embedded by the model's
// multi-vector head (PipelineDecisions::multi_vector), each document scored by MaxSim (max_sim in
// pipeline.h) against the query. Used by glassbox::rerank and by the server's rerank routes, which
// run the embedding through their scheduler.
#pragma once

#include <string>
#include <vector>

#include "glassbox/pipeline.h"

namespace glassbox {

// What late-interaction rerank embeds: the query (query role) first, then each document (document
// role; options.truncate lets a document lose tokens from options.direction's end). options.split is
// refused: PyLate declares no way to join the vectors of windows.
Result<std::vector<PipelineInput>> late_interaction_inputs(const std::string& query, const std::vector<std::string>& documents,
                                                           const RerankOptions& options);

// Their embeddings, in late_interaction_inputs' order -> the documents ranked by MaxSim (score = logit =
// MaxSim; ties keep the documents' order; options.top_n applied).
Result<std::vector<RankedDocument>> rank_by_max_sim(const std::vector<Embedding>& embedded, const RerankOptions& options);

}  // namespace glassbox
