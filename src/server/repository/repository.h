// The model registry: which models exist (command-line directories, sub-folders of
// --model-repository), which version of each serves, and their lifecycle. A new version is
// loaded and warmed beside the serving one, then swapped in with one pointer store; requests
// hold the version they started on until they finish. A failed load leaves the serving
// version in place. Loads and unloads run one at a time on the registry's own thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "glassbox/pipeline.h"
#include "glassbox/session.h"
#include "server/repository/loaded_model.h"
#include "server/server_options.h"

namespace glassbox::server {

struct IndexEntry {
  std::string name;
  std::string version;  // serving version ("" when none)
  std::string state;    // "READY", "LOADING", "UNAVAILABLE"
  std::string reason;   // why not ready, the last failed load, or "ready without warm-up: ..."
  nlohmann::ordered_json warmup;  // the serving version's warm-up: plan, source, outcome (null when none serves)
};

// The answer to "which model serves this request": the model, or an HTTP status and message.
struct ModelLookup {
  std::shared_ptr<const LoadedModel> model;
  int status = 200;
  std::string message;
};

// A model name is 1-128 of [A-Za-z0-9._-], starting with a letter or digit: no separators,
// no "..", no NUL, so a name can never leave the repository.
bool valid_model_name(std::string_view name);

class ModelRepository {
 public:
  // engine: the session options of every model and the precision override (serve --precision
  // or the config file), which wins over each model's glassbox.json.
  ModelRepository(const ServerOptions& options, PipelineOptions engine);
  ~ModelRepository();

  // Called after every load attempt (metrics: glassbox_model_loads_total{model,result}). Set before load_all.
  void set_load_observer(std::function<void(const std::string& name, bool ok)> observer) { on_load_ = std::move(observer); }
  // Where generation models record their metrics (GenerationWorker). Set before load_all.
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }
  // Collects the models to serve (validates names and folders); loads nothing yet.
  Status configure();
  // Loads every configured model in turn on the registry thread; `done` runs after the last.
  void load_all(std::function<void()> done);
  // (Re)loads `name` from its folder (registers a repository folder added since start).
  void load(const std::string& name, std::function<void(int status, std::string message)> done);
  void unload(const std::string& name, std::function<void(int status, std::string message)> done);

  ModelLookup get(const std::string& name, const std::string& version = "") const;
  // The one READY text model of that task when the request names none.
  ModelLookup default_text_model(PipelineTask task) const;
  std::vector<IndexEntry> index() const;
  // Every configured model has finished its first load (READY or failed) and one is READY.
  bool ready() const;
  void stop();

 private:
  struct Slot {
    std::string folder;  // model directory or folder of version folders
    std::shared_ptr<const LoadedModel> current;
    std::string state = "UNAVAILABLE";
    std::string reason = "not loaded yet";
    std::string signature;  // of the files last loaded (polling)
  };

  void run_tasks();
  void post(std::function<void()> task);
  std::pair<int, std::string> load_now(const std::string& name);
  void poll_once();

  ServerOptions options_;
  PipelineOptions engine_;
  mutable std::mutex mu_;
  std::map<std::string, Slot> slots_;
  bool first_pass_done_ = false;
  std::deque<std::function<void()>> tasks_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::function<void(const std::string&, bool)> on_load_;
  Metrics* metrics_ = nullptr;
  std::thread thread_;
};

}  // namespace glassbox::server
