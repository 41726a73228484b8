// Reading a model directory and deriving the pipeline decisions from its files.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"

namespace glassbox::pipeline {

struct ModelDirFiles {
  std::string dir;
  std::string model_path;
  std::string tokenizer_path;
  nlohmann::json config;            // config.json (required)
  nlohmann::json tokenizer_config;  // tokenizer_config.json or null
  nlohmann::json glassbox;          // glassbox.json or null
};

Result<ModelDirFiles> read_model_dir(const std::string& dir);

// Derives every decision; `model_outputs` and `tokenizer` fill gaps (task from the
// output name, pad id from the tokenizer). Each decision gets one Derivation row.
Result<PipelineDecisions> derive_decisions(const ModelDirFiles& files, const PipelineOptions& options,
                                           const std::vector<TensorSpec>& model_outputs, const Tokenizer& tokenizer,
                                           std::vector<Derivation>& derivations);

// "none" -> nullopt; "longest_first" etc. -> a policy at max_length.
Result<std::optional<TruncationPolicy>> parse_truncation(const std::string& text, int64_t max_length);

}  // namespace glassbox::pipeline
