// What the image classifier and the image embedder share: the ONNX file of an image model directory,
// found by one rule (model.onnx, else onnx/model.onnx, the Optimum / transformers.js layout, else an error
// naming both; the session is loaded from it and the choice recorded as the "model" step), and the
// preprocessed images of one run as the model input's pixel tensor.
#pragma once

#include <string>
#include <vector>

#include "glassbox/session.h"
#include "glassbox/vision.h"

namespace glassbox::vision {

Result<Session> load_model_session(const std::string& dir, const SessionOptions& options, std::vector<Step>& steps);

// The images preprocessed as declared and stacked along dim 0, checked against the fixed dims (after the
// batch) of the session's input `input`: a mismatch is an error, never a resize to fit.
Result<Tensor> pixel_batch(const std::vector<const RgbImage*>& images, const Preprocess& pre, Layout layout,
                           const DecodeLimits& limits, const Session& session, const std::string& input);

}  // namespace glassbox::vision
