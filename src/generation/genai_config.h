// onnxruntime-genai's builder layout: genai_config.json (written by the builder's make_genai_config)
// read field by field. Every field is either used (the decoder file, the names it must match, the
// sizes checked against the graph, the policy fields with "genai_config.json ..." as their source)
// or declared as not used with the reason; an unknown field, or a value glassbox does not implement
// (beam search, min_length, renamed inputs, execution providers), is refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/generation.h"

namespace glassbox::generation {

struct GenaiConfig {
  std::string model_file;  // model.decoder.filename, relative to the directory
  // Policy fields in transformers' names (do_sample, temperature, top_k, top_p, repetition_penalty,
  // eos_token_id, pad_token_id), each {"value": ..., "source": "genai_config.json search.top_k"}.
  nlohmann::json policy = nlohmann::json::object();
  int64_t context_length = 0;
  int64_t layers = 0, kv_heads = 0, head_size = 0, vocab_size = 0;  // checked against the graph
  std::vector<DecoderInfo::ConfigField> fields;  // every field with its use, for explain
};

// Reads and validates DIR/genai_config.json.
Result<GenaiConfig> read_genai_config(const std::string& path);

// The graph's sizes against the file's: a mismatch is an error naming both.
Status check_genai_sizes(const GenaiConfig& g, const DecoderInfo& info);

}  // namespace glassbox::generation
