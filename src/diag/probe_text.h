// Tokenizer-driven probe cases on a model directory (model.onnx + tokenizer.json + ...):
// texts of max-1 ... max+3 tokens, empty and whitespace-only text, NUL/control chars,
// combining marks, emoji ZWJ sequences, invalid UTF-8, a 1 MB input, and the unknown-token
// rate on a multilingual sample. Each case runs through the real pipeline (the model
// directory's declared decisions) and reports truncation, refusals and failures.
#pragma once

#include <string>
#include <vector>

#include "diag/probe.h"

namespace glassbox::diag {

// Appends the text cases to `report`; an error only when the pipeline cannot be loaded.
Status probe_text_cases(const std::string& model_dir, const SessionOptions& session_options, ProbeReport& report);

}  // namespace glassbox::diag
