// OIP output tensors of a text model with glassbox.json "heads" (include/glassbox/embedding_heads.h;
// docs/retrieval.md "Several heads from one run"): one set per declared head, named after it, in the order
// dense, sparse, multi_vector; one engine run per batch gives them all.
//   dense              FP32  [N, dim]    text n's dense vector at row n
//   sparse_indices     INT64 [nnz, 2]    COO: row k is (text, token id) of sparse_values[k]; per text, ids ascending
//   sparse_values      FP32  [nnz]       (the layout of a SPLADE model's "indices" / "values")
//   multi_vector       FP32  [rows, dim] every text's kept token vectors, text after text
//   multi_vector_rows  INT64 [N]         how many rows of multi_vector are text n's
// The metadata (describe_text_model) and the tensors (OIP infer) come from here, so the names are said once.
#pragma once

#include <vector>

#include "glassbox/embedding_heads.h"
#include "server/codec/oip_codec.h"
#include "server/repository/loaded_model.h"

namespace glassbox::server {

// The outputs GET /v2/models/{m} lists for a heads model (dims -1 where the graph leaves them open).
std::vector<OipSpec> head_output_specs(const Pipeline& pipeline, const EmbeddingHeads& heads);

// Every declared head of `texts` (one HeadEmbeddings per text, all declared heads present) as the tensors
// above; `dropped`: the tokens truncation dropped, summed over the texts.
std::vector<OipTensor> head_output_tensors(const EmbeddingHeads& heads, const std::vector<HeadEmbeddings>& texts,
                                           int64_t& dropped);

}  // namespace glassbox::server
