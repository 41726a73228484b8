// Image classification on a model directory (Hugging Face layout): model.onnx (or onnx/model.onnx),
// config.json (id2label), preprocessor_config.json and optional glassbox.json. Every decision
// (preprocessing steps, model file, input, layout, labels, score function) is recorded as a Step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "glassbox/session.h"
#include "glassbox/vision.h"

namespace glassbox::vision {

struct ImageClassifierOptions {
  SessionOptions session;
  DecodeLimits limits;
};

struct ImageLabelScore {
  std::string label;
  float score = 0;
};

struct ImageClassification {
  std::vector<ImageLabelScore> labels;  // top_k, by score
  std::vector<float> logits;            // the model's output row, in label order
  int width = 0, height = 0;            // the decoded (upright) image
};

// True when `dir` is an image model directory: it holds preprocessor_config.json (or a glassbox.json
// with a "vision" object) and no tokenizer.json (the declared rule `classify` uses).
bool is_image_model_dir(const std::string& dir);

class ImageClassifier {
 public:
  static Result<ImageClassifier> load(const std::string& model_dir, const ImageClassifierOptions& options = {});
  ImageClassifier(ImageClassifier&&) noexcept;
  ImageClassifier& operator=(ImageClassifier&&) noexcept;
  ~ImageClassifier();

  const std::vector<Step>& steps() const;  // preprocessing, then model decisions
  const Session& session() const;

  Result<ImageClassification> classify(const RgbImage& image, int top_k = 5) const;
  // Decodes (limits apply before allocation) and classifies; errors name the path.
  Result<ImageClassification> classify_file(const std::string& path, int top_k = 5) const;

  struct Impl;

 private:
  explicit ImageClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox::vision
