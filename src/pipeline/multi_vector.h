// Multi-vector (ColBERT-style late interaction) models, as PyLate publishes them:
//   modules.json                       Transformer -> pylate.models.Dense.Dense (any number, per token)
//   config_sentence_transformers.json  query_prefix, document_prefix, query_length, document_length,
//                                      do_query_expansion, attend_to_expansion_tokens, skiplist_words,
//                                      similarity_fn_name "MaxSim" (absent fields: PyLate's constructor defaults)
//   glassbox.json "multi_vector"       the same fields, each over the file's
// Encoding follows PyLate's ColBERT.tokenize: the text is tokenized to length - 1 tokens, the prefix
// token is inserted after the first token (attention 1, type 0); a query with expansion is padded to
// length - 1 first with the tokenizer's mask token (attention 0, or 1 with attend_to_expansion_tokens).
// Output follows ColBERT.encode: each token vector through the Dense layers, then kept (a query with
// expansion: every position; a query without: attention 1; a document: attention 1 and not in the
// skiplist) and L2-normalized.
#pragma once

#include <vector>

#include "glassbox/pipeline.h"
#include "pipeline/model_dir.h"

namespace glassbox::pipeline {

// Sets dec.multi_vector (and the rows explain shows) when the directory declares a multi-vector
// head; returns whether it does. Unknown fields and values are refused by name.
Result<bool> derive_multi_vector(const ModelDirFiles& f, const Tokenizer& tokenizer, PipelineDecisions& dec,
                                 std::vector<Derivation>& d);

// Tokens the tokenizer may give a text: the role's length, less one for the prefix token.
int64_t multi_vector_text_limit(const MultiVectorHead& head, bool query);

// A text's encoding (at most multi_vector_text_limit tokens) -> the model's input: expansion, prefix.
void shape_multi_vector_encoding(const MultiVectorHead& head, bool query, Encoding& e);

// tokens: the model's [seq, hidden] output for one text (row-major). Appends the kept rows (Dense
// layers applied, L2-normalized) to `rows`; returns how many.
Result<int64_t> multi_vector_rows(const MultiVectorHead& head, const float* tokens, int64_t seq, int64_t hidden,
                                  const EncodedText& text, std::vector<float>& rows);

}  // namespace glassbox::pipeline
