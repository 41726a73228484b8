// Reading a model directory and deriving the pipeline decisions from its files.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"
#include "pipeline/sentence_transformers.h"

namespace glassbox::pipeline {

struct ModelDirFiles {
  std::string dir;
  std::string model_path;
  ModelFileChoice model;            // which ONNX file and why
  std::string tokenizer_path;
  nlohmann::json config;            // config.json (required)
  nlohmann::json tokenizer_config;  // tokenizer_config.json or null
  nlohmann::json glassbox;          // glassbox.json or null
  SentenceTransformersLayout st;    // the sentence-transformers files (has_modules false without modules.json)
};

// model_file: the flag's choice of ONNX file (wins over glassbox.json "model_file").
Result<ModelDirFiles> read_model_dir(const std::string& dir, const std::optional<std::string>& model_file = std::nullopt);

// Derives every decision; `model_outputs` and `tokenizer` fill gaps (task from the
// output name, pad id from the tokenizer). Each decision gets one Derivation row.
Result<PipelineDecisions> derive_decisions(const ModelDirFiles& files, const PipelineOptions& options,
                                           const std::vector<TensorSpec>& model_outputs, const Tokenizer& tokenizer,
                                           std::vector<Derivation>& derivations);

// The embedding decisions (pooling, include_prompt, dense, normalize, prompts, similarity,
// lowercase_input): glassbox.json > the sentence-transformers files > declared defaults.
Status derive_embedding(const ModelDirFiles& files, const std::vector<TensorSpec>& model_outputs, PipelineDecisions& dec,
                        std::vector<Derivation>& derivations);

// How a classifier's logits become scores (decisions().score_function; classify task only):
// glassbox.json > a CrossEncoder's declared activation > config.json problem_type > transformers'
// rule for the number of labels (classify_decisions.cpp).
Status derive_score_function(const ModelDirFiles& files, PipelineDecisions& dec, std::vector<Derivation>& derivations);
// classify: glassbox.json "abstain_below" (after derive_score_function: it needs probabilities).
Status derive_abstain(const ModelDirFiles& files, PipelineDecisions& dec, std::vector<Derivation>& derivations);

// "none" -> nullopt; "longest_first" etc. -> a policy at max_length.
Result<std::optional<TruncationPolicy>> parse_truncation(const std::string& text, int64_t max_length);

// "a, b, c": a list in an error, a source or an explain value.
std::string joined(const std::vector<std::string>& v);

}  // namespace glassbox::pipeline
