// The files of a decoder model directory and the generation policy derived from them, field by
// field with sources (request > glassbox.json > generation_config.json > config.json > default).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "generation/genai_config.h"
#include "glassbox/generation.h"

namespace glassbox::generation {

struct ModelFiles {
  std::string dir;
  std::string model_path;             // model.onnx, else onnx/model.onnx; genai_config.json's file when it exists
  std::string tokenizer_path;
  std::optional<GenaiConfig> genai;   // onnxruntime-genai's layout: genai_config.json
  nlohmann::json config;              // config.json (required, except beside genai_config.json)
  nlohmann::json generation_config;   // generation_config.json or null
  nlohmann::json tokenizer_config;    // tokenizer_config.json or null
  nlohmann::json glassbox;            // glassbox.json or null
};

Result<ModelFiles> read_model_files(const std::string& dir);

// What the files say, resolved once at load: the policy of a request without overrides (its
// max_new_tokens not yet capped to a prompt's room), the stop set, and the findings.
struct PolicyBase {
  GenerationPolicy policy;
  std::vector<GenerationWarning> warnings;
};

// vocab_size: the logits' width (stop ids must be below it).
Result<PolicyBase> derive_policy(const ModelFiles& files, const Tokenizer& tokenizer, int64_t vocab_size,
                                 const GenerationOptions& options);

// The base policy with a request's overrides applied (validated: ranges, stop ids in the vocabulary).
Result<GenerationPolicy> apply_request(const GenerationPolicy& base, const GenerationRequest& request, int64_t vocab_size);

// glassbox's default max_new_tokens (256) and the source text used when it applies.
inline constexpr int64_t kDefaultMaxNewTokens = 256;
inline constexpr const char* kDefaultSource = "glassbox default";

}  // namespace glassbox::generation
