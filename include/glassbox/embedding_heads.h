// Several embedding heads computed by ONE engine run (the BGE-M3 shape): the model's graph gives a dense
// vector, per-token lexical weights and per-token vectors as separate outputs, and glassbox.json "heads"
// declares which output is which head and what glassbox still does to it (docs/retrieval.md, "Several
// heads from one run"). Every field is required: nothing about a head is guessed.
//
//   "heads": {
//     "dense":        {"output": "dense_vecs", "normalize": false},
//     "sparse":       {"output": "sparse_vecs", "pooling": "max", "skip_tokens": ["[CLS]", "[SEP]", "[PAD]", "[UNK]"]},
//     "multi_vector": {"output": "colbert_vecs", "first_position": 1, "normalize": false}
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"

namespace glassbox {

// dense: the output [batch, dim] is the text's vector (the graph pooled it); normalize: glassbox L2-normalizes it.
struct DenseHeadDecl {
  std::string output;
  bool normalize = false;
};

// sparse: the output [batch, sequence] or [batch, sequence, 1] is one weight per token (BGE-M3: relu(w.h + b));
// a token id's weight is the max over its positions with attention 1 ("pooling": "max", FlagEmbedding's
// _process_token_weights), the skip tokens (their ids) left out, and only weights > 0 kept; ids ascending.
struct TokenWeightHeadDecl {
  std::string output;
  std::string pooling = "max";
  std::vector<std::string> skip_tokens;
  std::vector<uint32_t> skip_ids;
};

// multi_vector: the output [batch, sequence - first_position, dim] holds the vector of token position
// r + first_position at row r (BGE-M3: 1, its colbert head skips [CLS]); rows whose position has attention 1
// are kept, then L2-normalized when normalize is true.
struct TokenVectorHeadDecl {
  std::string output;
  int64_t first_position = 0;
  bool normalize = false;
};

struct EmbeddingHeads {
  std::optional<DenseHeadDecl> dense;
  std::optional<TokenWeightHeadDecl> sparse;
  std::optional<TokenVectorHeadDecl> multi_vector;
};

// "dense", "sparse", "multi_vector": the declared heads, in this order.
std::vector<std::string> head_names(const EmbeddingHeads& heads);

// The heads the model directory declares; nullptr when it declares none (glassbox.json has no "heads").
const EmbeddingHeads* embedding_heads(const Pipeline& pipeline);

// One text's heads, each with Embedding's conventions: dense `vector`; sparse `indices` + `vector`;
// multi_vector `vectors` rows of `vector`. A head not declared (or not asked for) is nullopt.
struct HeadEmbeddings {
  std::optional<Embedding> dense, sparse, multi_vector;
  int64_t tokens = 0;
  int64_t tokens_dropped = 0;
};

// A batch of encoded texts through exactly one engine run; every declared head is read from that run's outputs.
Result<std::vector<HeadEmbeddings>> embed_heads_encoded(const Pipeline& pipeline, const std::vector<EncodedText>& batch,
                                                        BatchStats* stats = nullptr);
// Texts, in batches of the declared batch_size (one engine run per batch).
Result<std::vector<HeadEmbeddings>> embed_heads(const Pipeline& pipeline, const std::vector<PipelineInput>& inputs);

}  // namespace glassbox
