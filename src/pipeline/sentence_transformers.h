// The sentence-transformers directory layout, read as the library writes it:
//   modules.json                      the module chain [{"idx", "name", "path", "type"}]:
//                                     Transformer -> Pooling -> Dense* -> Normalize?
//   <pooling path>/config.json        word_embedding_dimension, pooling_mode_* flags, include_prompt
//   <dense path>/config.json          in_features, out_features, bias, activation_function
//   <dense path>/model.safetensors    linear.weight [out, in], linear.bias [out]
//   config_sentence_transformers.json prompts, default_prompt_name, similarity_fn_name
//   sentence_bert_config.json         max_seq_length, do_lower_case
// A PyLate ColBERT directory has Transformer -> pylate.models.Dense.Dense (per token, no Pooling):
//   <dense path>/config.json          in_features, out_features, bias, activation_function, use_residual (false)
// A SparseEncoder (SPLADE) directory has the chain MLMTransformer -> SpladePooling instead:
//   <splade path>/config.json         pooling_strategy (max|sum), activation_function (relu|log1p_relu),
//                                     word_embedding_dimension (the vocabulary size, may be null)
// A module type, pooling flag, activation or weights file glassbox cannot honour exactly is an
// error naming it; nothing falls back to another behaviour.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"

namespace glassbox::pipeline {

struct SentenceTransformersLayout {
  bool has_modules = false;              // modules.json exists
  std::string chain;                     // "Transformer -> Pooling(1_Pooling) -> Normalize(2_Normalize)"
  std::vector<Pooling> pooling_modes;    // in sentence-transformers' concatenation order
  std::string pooling_source;            // "1_Pooling/config.json pooling_mode_cls_token"
  int64_t word_embedding_dimension = 0;
  bool include_prompt = true;
  std::string include_prompt_source;
  std::vector<DenseLayer> dense;
  // MLMTransformer -> SpladePooling: the sparse head (pooling_modes then stays empty).
  std::optional<SparseHead> splade;
  std::string splade_source;             // "modules.json 1_SpladePooling (...SpladePooling)"
  // Transformer -> pylate.models.Dense.Dense (one or more): a multi-vector (ColBERT) model, Dense per token.
  std::vector<DenseLayer> token_dense;
  bool normalize = false;                // a Normalize module ends the chain
  std::string normalize_source;
  // config_sentence_transformers.json (absent fields: nullopt)
  std::optional<std::map<std::string, std::string>> prompts;
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> similarity;
  // sentence_bert_config.json
  std::optional<int64_t> max_seq_length;
  std::optional<bool> do_lower_case;
};

// Reads the layout from `dir`; absent files leave their fields empty (has_modules false).
Result<SentenceTransformersLayout> read_sentence_transformers(const std::string& dir);

}  // namespace glassbox::pipeline
