// The ONNX file of an image model directory, found by one rule for the classifier and the embedder:
// model.onnx, else onnx/model.onnx (the Optimum / transformers.js layout), else an error naming both.
// The session is loaded from it and the choice recorded as the "model" step.
#pragma once

#include <string>
#include <vector>

#include "glassbox/session.h"
#include "glassbox/vision.h"

namespace glassbox::vision {

Result<Session> load_model_session(const std::string& dir, const SessionOptions& options, std::vector<Step>& steps);

}  // namespace glassbox::vision
