// What loading a model shows `glassbox explain MODEL`, by the kind the path is (serve reads it the same way):
// an OCR directory (every stage's parameter), an image-model directory (every preprocessing step), a text
// pipeline directory (its decisions, with the memory breakdown under a budget), a tensor-model directory or a
// model file. Each comes with the op decisions made at load and the weights cache's state.
#pragma once

#include <optional>
#include <string>

#include "diag/explain.h"
#include "glassbox/pipeline.h"
#include "glassbox/session.h"

namespace glassbox::diag {

struct ExplainedModel {
  ModelExplanation model;
  // The directory a warm-up declaration is read from (a folder, or the folder of a file named model.onnx;
  // "" for none) and whether it is a text pipeline's; a tensor model's own session (its warm-up plan
  // reads the inputs).
  std::string warmup_dir;
  bool pipeline = false;
  std::optional<Session> tensor_session;
};

// Loads `path` as explain does. `pipeline_options` (a text pipeline's: the session options and the flags'
// overrides, the model file) also names a tensor directory's model file;
// `max_memory` (bytes, 0 = none) is the flag's budget for a text pipeline. `opts.session` becomes the
// resolved options (threads = 0 -> physical cores, exactly as `run` would) and `opts.sources` records the
// session options a model's glassbox.json declared.
Result<ExplainedModel> explain_model(const std::string& path, const PipelineOptions& pipeline_options, int64_t max_memory,
                                     EffectiveOptions& opts);

}  // namespace glassbox::diag
