// The warm-up run of a served model: declared (the serve config's server.model_warmup[NAME], else
// the model's glassbox.json "warmup"), the way Triton's model_warmup is data; or, when nothing is
// declared, derived from the model's inputs by a declared rule (ServerOptions warmup_*). The plan
// records where every shape and fill came from; the index and explain show it (docs/serving.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/pipeline.h"
#include "glassbox/session.h"
#include "server/server_options.h"

namespace glassbox::server {

// The derivation rule's values (ServerOptions warmup_batch_size / _sequence_length / _image_size).
struct WarmupRules {
  int64_t batch_size = 1;
  int64_t sequence_length = 16;
  int64_t image_size = 224;
};
WarmupRules warmup_rules(const ServerOptions& options);

struct WarmupInputPlan {
  std::string name;
  std::string datatype;       // OIP name ("FP32", "BYTES", ...)
  std::vector<int64_t> shape;
  std::string fill;           // "zeros", "random (seed 7, uniform in [0, 1))", "data (4 values)", "file x.npy"
  std::string shape_source;   // "declared", "file", or per symbolic dim: "dim 0 'N' batch = 1, ..."
};

struct WarmupPlan {
  bool declared = false;
  std::string source;  // "derived", "glassbox.json", "serve config (server.model_warmup)"
  std::string rule;    // derived: the rule with its values
  std::vector<WarmupInputPlan> inputs;
  std::vector<NamedTensor> feeds;      // tensor models
  std::vector<PipelineInput> texts;    // text models

  // {"source", "declared", "rule"?, "inputs": [{name, datatype, shape, fill, shape_source}]}
  nlohmann::ordered_json to_json() const;
  // "x FP32[1,3,224,224] zeros" per input, for log lines and reasons.
  std::string summary() const;
};

// The model's warm-up declaration: server.model_warmup[name] wins over MODEL_DIR/glassbox.json's
// "warmup"; null when neither declares one. `source` names where it came from.
struct WarmupDeclaration {
  nlohmann::json value;  // null: none
  std::string source;
};
Result<WarmupDeclaration> find_warmup_declaration(const ServerOptions& options, const std::string& name,
                                                  const std::string& model_dir);

// A tensor model's plan. Declared: every input of the model, each {"dims", "fill": "zeros" |
// "random" (+ "seed", "low", "high"), or "data": [...], or "file": "x.npy" | "x.pb"}; files are
// read relative to model_dir and may not leave it. Not declared: the derivation rule.
Result<WarmupPlan> plan_tensor_warmup(const std::vector<TensorSpec>& inputs, const WarmupDeclaration& declared,
                                      const std::string& model_dir, const WarmupRules& rules);
// A text model's plan: declared {"inputs": {"text": {"data": [...]}, "text_pair"?: {...}}}, else one short text.
Result<WarmupPlan> plan_text_warmup(const WarmupDeclaration& declared);

}  // namespace glassbox::server
