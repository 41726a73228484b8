// One loaded, warmed version of a model: a text pipeline (model directory with
// tokenizer.json) or a tensor session (model.onnx alone). Immutable once built and shared
// by the requests using it, so a reload never changes a model under a running request.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/pipeline.h"
#include "glassbox/session.h"

namespace glassbox::server {

enum class ModelKind { kText, kTensor };

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
  std::vector<OipSpec> inputs, outputs;
  nlohmann::ordered_json explain;    // the model's declared decisions and engine options
  std::string dir;                   // where it was loaded from: never shown to clients

  const Session& engine() const { return pipeline ? pipeline->session() : *session; }
  bool is_classifier() const { return pipeline && pipeline->decisions().task == PipelineTask::kClassify; }
  bool is_embedder() const { return pipeline && pipeline->decisions().task == PipelineTask::kEmbed; }
};

// An error of this model's load or run as a client may see it: "where: what (fix: ...)"
// with the model's folder replaced by its name.
std::string client_message(const Error& e, const LoadedModel& m);

// Loads the version in `dir` and runs one warm-up inference; any failure (files, model,
// warm-up) is the error, with the model directory named relative to the repository.
Result<std::shared_ptr<const LoadedModel>> load_model_version(const std::string& name, const std::string& version,
                                                              const std::string& dir, const PipelineOptions& engine);

}  // namespace glassbox::server
