// Image classification on a model directory (Hugging Face layout): model.onnx (or onnx/model.onnx),
// config.json (id2label), preprocessor_config.json and optional glassbox.json. Every decision
// (preprocessing steps, model file, input, layout, labels, score function) is recorded as a Step.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/session.h"
#include "glassbox/vision.h"

namespace glassbox::vision {

// One engine run of a pipeline at its largest declared input (docs/memory.md): the session and feeds of that
// shape (zero-filled). The memory budget dry-runs it (Session::check_memory).
struct SizedRun {
  std::string what;  // "model", "det", "cls", "rec"
  const Session* session = nullptr;
  std::vector<NamedTensor> feeds;
};

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
  const std::vector<std::string>& labels() const;  // in logit order
  // The run of one image at the declared size (kUnsupported when the size follows the image).
  Result<SizedRun> largest_run() const;

  Result<ImageClassification> classify(const RgbImage& image, int top_k = 5) const;
  // Decodes (limits apply before allocation) and classifies; errors name the path.
  Result<ImageClassification> classify_file(const std::string& path, int top_k = 5) const;

  struct Impl;

 private:
  explicit ImageClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Which task an image model directory serves, and why (a Step: field "task"). glassbox.json
// "task" ("image-classification" | "image-feature-extraction") wins; else config.json "architectures":
// a name ending in "ForImageClassification" classifies, one ending in "VisionModel",
// "VisionModelWithProjection" or "Model" (CLIPVisionModel, SiglipVisionModel, ViTModel, Dinov2Model)
// extracts features; else image-classification as a declared default with its risk.
enum class ImageTask { kClassification, kFeatureExtraction };
Result<std::pair<ImageTask, Step>> image_model_task(const std::string& dir);

struct ImageEmbedding {
  std::vector<float> vector;
  int width = 0, height = 0;  // the decoded (upright) image
};

// Image feature extraction (CLIP/SigLIP-style vision towers, ViT/DINOv2 encoders): decode -> the
// declared preprocessing -> engine run -> the declared output, pooled and normalized as declared
// (docs/vision.md, "Image embeddings"): output image_embeds, else pooler_output, else
// last_hidden_state pooled by glassbox.json "pooling" ("cls" | "mean"); normalize from glassbox.json
// "normalize" (default false: transformers' image-feature-extraction pipeline returns the raw vector).
class ImageEmbedder {
 public:
  static Result<ImageEmbedder> load(const std::string& model_dir, const ImageClassifierOptions& options = {});
  ImageEmbedder(ImageEmbedder&&) noexcept;
  ImageEmbedder& operator=(ImageEmbedder&&) noexcept;
  ~ImageEmbedder();

  const std::vector<Step>& steps() const;
  const Session& session() const;
  int64_t dims() const;  // the embedding's length (-1 until the first run when the model leaves it symbolic)
  // The run of `batch` images at the declared size (one image when the model's batch dimension is fixed).
  Result<SizedRun> largest_run(int64_t batch) const;

  // Every image is preprocessed to the declared size, so images of any sizes stack into one
  // [N, ...] tensor without padding: one engine run for the batch when the model's batch dimension
  // is symbolic, one run per image when it is fixed at 1.
  Result<std::vector<ImageEmbedding>> embed(const std::vector<const RgbImage*>& images) const;
  Result<std::vector<ImageEmbedding>> embed_files(const std::vector<std::string>& paths) const;

  struct Impl;

 private:
  explicit ImageEmbedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox::vision
