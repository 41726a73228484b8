// Request fields shared by the embedding and rerank routes (TEI /embed, /embed_all, /similarity,
// OpenAI /v1/embeddings, /rerank, /v1/rerank): the long-input policy, TEI's truncation_direction
// and prompt_name, and Matryoshka dimensions; and the per-input report of what a policy did.
//
// The long-input policy (docs/retrieval.md "Long inputs"): a text (a rerank's document with its
// query) over the model's max_length is
//   "error"    (default) refused: 413 naming the input's index and its token count;
//   "truncate" cut to max_length (a rerank cuts only the document), the response saying per input
//              how many tokens were dropped (header X-Glassbox-Tokens-Dropped-Per-Input; rerank bodies
//              also carry "tokens_dropped");
//   "split"    rerank only: cut into windows, each scored with the whole query, the document scoring
//              its best window ("windows" in the body).
// Field "overflow"; TEI's "truncate": true means "truncate" (both given and disagreeing: 400).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"
#include "server/http/http_types.h"

namespace glassbox::server {

enum class Overflow { kError, kTruncate, kSplit };

// "overflow" and "truncate" of `body` (TEI: at `body` or, for /similarity, its "parameters").
// split_allowed false: "split" is refused, saying why.
Result<Overflow> read_overflow(const nlohmann::json& body, bool split_allowed);
// TEI's "truncation_direction": "Right" (default) or "Left" (lowercase accepted).
Result<Side> read_truncation_direction(const nlohmann::json& body);

// Applies an embed request's fields to its inputs and job: overflow (error/truncate), truncation_direction,
// prompt_name, normalize (TEI only: `tei`), dimensions (an integer >= 1). `fields` is the object holding them.
struct TextJob;
Status read_embed_fields(const nlohmann::json& fields, bool tei, std::vector<PipelineInput>& inputs, TextJob& job);

// "X-Glassbox-Tokens-Dropped-Per-Input: 0,12,0" (input order) when any input lost tokens, beside the
// total X-Glassbox-Tokens-Dropped.
void add_dropped_headers(HttpResponse& r, const std::vector<int64_t>& dropped_per_input);

// An error of an embedding run as the client sees it: overlong -> 413 with the policies to choose
// from; dimensions out of range -> 400 on "dimensions".
struct LoadedModel;
HttpResponse embed_error_response(const Error& e, const LoadedModel& m, const char* input_field);

// A model with glassbox.json "heads" (include/glassbox/embedding_heads.h; heads_request.cpp): nullopt when it
// declares `head` ("dense", "sparse", "multi_vector") or declares no heads at all (the route's own checks
// apply); else a 400 on "model" naming the heads it declares and the route that serves each.
std::optional<Refusal> refuse_undeclared_head(const LoadedModel& m, const std::string& head);
// A heads job's answer read as any embed answer: every text's `head` moved into r.embeddings, in order.
struct TextResults;
Status take_head(TextResults& r, const std::string& head);

}  // namespace glassbox::server
