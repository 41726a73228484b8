// One loaded, warmed version of a model: a text pipeline (model directory with
// tokenizer.json) or a tensor session (model.onnx alone). Immutable once built and shared
// by the requests using it, so a reload never changes a model under a running request.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/chat_template.h"
#include "glassbox/error.h"
#include "glassbox/ocr.h"
#include "glassbox/pipeline.h"
#include "glassbox/vision_pipeline.h"
#include "glassbox/session.h"
#include "server/generation/generation_worker.h"
#include "server/metrics/metrics.h"
#include "server/server_options.h"

namespace glassbox::server {

// kGeneration: a decoder model directory (generation::is_generation_model_dir), served by a GenerationWorker.
// kImage: an image model directory (vision::is_image_model_dir): a classifier or an embedder by
// vision::image_model_task. kOcr: a PP-OCR directory (vision::ocr::is_ocr_model_dir).
enum class ModelKind { kText, kTensor, kGeneration, kImage, kOcr };

// Metadata of one declared input/output in OIP terms ("FP32", dims with -1).
struct OipSpec {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
};

struct LoadedModel {
  std::string name;
  std::string version;
  ModelKind kind = ModelKind::kTensor;
  std::optional<Pipeline> pipeline;  // kText
  std::optional<Session> session;    // kTensor
  std::shared_ptr<GenerationWorker> generator;  // kGeneration (its thread owns the session's mutable state)
  std::optional<ChatTemplate> chat_template;    // kGeneration with a chat template
  std::string chat_template_error;              // kGeneration without one: why (the chat route says it)
  std::shared_ptr<const vision::ImageClassifier> image_classifier;  // kImage, image-classification
  std::shared_ptr<const vision::ImageEmbedder> image_embedder;      // kImage, image-feature-extraction
  std::shared_ptr<const vision::ocr::OcrPipeline> ocr;              // kOcr
  vision::DecodeLimits image_limits;  // kImage / kOcr: checked from each image's header before decoding
  std::vector<OipSpec> inputs, outputs;
  nlohmann::ordered_json explain;    // the model's declared decisions and engine options (+ "warmup")
  nlohmann::ordered_json warmup;     // the warm-up plan and its outcome (the index and explain show it)
  std::string warmup_error;          // set when it serves without warm-up (derived shapes failed, policy ready)
  std::string dir;                   // where it was loaded from: never shown to clients
  // This model's part of the server's memory account (ServerOptions::max_memory, docs/memory.md): its estimate
  // less the process (weights, tokenizer, run tensors, a decoder's KV budget); the repository sums them.
  int64_t memory_bytes = 0;

  const Session& engine() const {
    if (image_classifier) return image_classifier->session();
    if (image_embedder) return image_embedder->session();
    if (ocr) return ocr->det_session();
    return pipeline ? pipeline->session() : generator ? generator->session().session() : *session;
  }
  bool takes_images() const { return kind == ModelKind::kImage || kind == ModelKind::kOcr; }
  bool is_generator() const { return generator != nullptr; }
  bool is_classifier() const { return pipeline && pipeline->decisions().task == PipelineTask::kClassify; }
  bool is_embedder() const { return pipeline && pipeline->decisions().task == PipelineTask::kEmbed; }
  // An embedder with a sparse (SPLADE) head: /embed_sparse, OIP "indices" + "values".
  bool is_sparse() const { return is_embedder() && pipeline->decisions().sparse.has_value(); }
};

// An error of this model's load or run as a client may see it: "where: what (fix: ...)"
// with the model's folder replaced by its name.
std::string client_message(const Error& e, const LoadedModel& m);

// Loads the version in `dir` and runs its warm-up (declared, else derived: warmup.h). Any failure
// of the files, the model or a declared warm-up is the error; a derived warm-up that fails is the
// error only under warmup_failure "unavailable" (else the model serves, warmup_error says why).
// The model directory is never named in an error (clients see "<model>"). `others`: the memory accounts of
// the models already loaded (ServerOptions::max_memory: this model gets what they leave, or is refused).
Result<std::shared_ptr<const LoadedModel>> load_model_version(const std::string& name, const std::string& version,
                                                              const std::string& dir, const PipelineOptions& engine,
                                                              const ServerOptions& options, Metrics* metrics = nullptr,
                                                              int64_t others = 0);

}  // namespace glassbox::server
