#include "server/repository/repository.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "server/log.h"

namespace glassbox::server {
namespace fs = std::filesystem;
namespace {

struct VersionDir {
  std::string version;
  std::string dir;
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A directory is a model version when it holds its ONNX file, or is a PP-OCR directory (glassbox.json
// "ocr" names its files: vision::ocr::is_ocr_model_dir).
bool is_model_version_dir(const std::string& dir) { return find_model_file(dir).ok() || vision::ocr::is_ocr_model_dir(dir); }

// A model directory serves as version 1; a folder of numeric version folders serves the highest.
Result<VersionDir> resolve_version(const std::string& folder) {
  std::error_code ec;
  if (is_model_version_dir(folder)) return VersionDir{"1", folder};  // model.onnx, onnx/model.onnx, a declared variant, OCR
  int64_t best = -1;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const std::string v = e.path().filename().string();
    if (!all_digits(v) || !e.is_directory(ec) || !is_model_version_dir(e.path().string())) continue;
    best = std::max<int64_t>(best, std::stoll(v));
  }
  if (ec || best < 0)
    return make_error(ErrorCode::kNotFound, "no model.onnx in the model folder or in a numeric version folder", "",
                      "lay out the model as MODEL/model.onnx or MODEL/<version>/model.onnx");
  return VersionDir{std::to_string(best), (fs::path(folder) / std::to_string(best)).string()};
}

// What polling compares: the version and the size and mtime of the files a load reads.
std::string signature_of(const VersionDir& v) {
  std::string sig = v.version;
  std::vector<std::string> files = {"tokenizer.json", "config.json", "glassbox.json", "modules.json",
                                    "1_Pooling/config.json", "preprocessor_config.json"};
  if (auto model = find_model_file(v.dir); model.ok()) files.insert(files.begin(), model->relative);
  for (const auto& f : files) {
    struct stat st{};
    if (::stat((fs::path(v.dir) / f).c_str(), &st) == 0)
      sig += "|" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return sig;
}

// The folder of `name` inside the repository, refusing anything that resolves outside it.
std::optional<std::string> repository_folder(const std::string& repository, const std::string& name) {
  std::error_code ec;
  const fs::path root = fs::canonical(repository, ec);
  if (ec) return std::nullopt;
  const fs::path p = fs::canonical(root / name, ec);
  if (ec || !fs::is_directory(p, ec)) return std::nullopt;
  if (p.parent_path() != root) return std::nullopt;  // a symlink out of the repository
  return p.string();
}

}  // namespace

bool valid_model_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  }) && name.find("..") == std::string_view::npos;
}

ModelRepository::ModelRepository(const ServerOptions& options, PipelineOptions engine)
    : options_(options), engine_(std::move(engine)) {
  thread_ = std::thread([this] { run_tasks(); });
}

ModelRepository::~ModelRepository() { stop(); }

void ModelRepository::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// The warm-up options a load depends on, checked once before any model loads.
static Status check_warmup_options(const ServerOptions& o) {
  if (o.warmup_failure != "ready" && o.warmup_failure != "unavailable")
    return make_error(ErrorCode::kInvalidArgument, "warmup_failure '" + o.warmup_failure + "' is unknown", "server options",
                      "use \"ready\" or \"unavailable\"");
  for (int64_t v : {o.warmup_batch_size, o.warmup_sequence_length, o.warmup_image_size})
    if (v < 1 || v > (int64_t{1} << 20))
      return make_error(ErrorCode::kInvalidArgument, "warm-up sizes must be between 1 and 2^20, got " + std::to_string(v),
                        "server options: warmup_batch_size / warmup_sequence_length / warmup_image_size");
  if (!o.model_warmup.is_object())
    return make_error(ErrorCode::kInvalidArgument, "model_warmup must be an object {\"MODEL\": {\"inputs\": {...}}}",
                      "server options");
  return {};
}

Status ModelRepository::configure() {
  GB_RETURN_IF_ERROR(check_warmup_options(options_));
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& dir : options_.model_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      return make_error(ErrorCode::kNotFound, "model directory does not exist", dir, "pass a folder with model.onnx");
    std::string name = fs::path(dir).lexically_normal().filename().string();
    if (name.empty()) name = fs::path(dir).lexically_normal().parent_path().filename().string();
    if (!valid_model_name(name))
      return make_error(ErrorCode::kInvalidArgument, "folder name '" + name + "' is not a valid model name", dir,
                        "model names are letters, digits, '.', '_' and '-' (no '..')");
    if (slots_.count(name)) return make_error(ErrorCode::kInvalidArgument, "two models are named '" + name + "'", dir);
    slots_[name].folder = dir;
  }
  if (!options_.model_repository.empty()) {
    std::error_code ec;
    if (!fs::is_directory(options_.model_repository, ec))
      return make_error(ErrorCode::kNotFound, "model repository does not exist", options_.model_repository);
    for (const auto& e : fs::directory_iterator(options_.model_repository, ec)) {
      const std::string name = e.path().filename().string();
      if (!e.is_directory(ec)) continue;
      auto folder = repository_folder(options_.model_repository, name);
      if (!valid_model_name(name) || !folder) {
        log_line("skipping repository entry '" + name + "': not a valid model name or it leaves the repository");
        continue;
      }
      if (slots_.count(name)) return make_error(ErrorCode::kInvalidArgument, "two models are named '" + name + "'", *folder);
      slots_[name].folder = *folder;
    }
  }
  for (const auto& [name, decl] : options_.model_warmup.items())  // a typo would silently fall back to the rule
    if (!slots_.count(name))
      return make_error(ErrorCode::kInvalidArgument, "model_warmup declares a warm-up for '" + name + "', which is not served",
                        "server options: model_warmup",
                        "name a model of the command line or the repository; a model added later declares its warm-up "
                        "in its glassbox.json");
  return {};
}

void ModelRepository::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_all();
}

void ModelRepository::run_tasks() {
  auto next_poll = std::chrono::steady_clock::now();
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const bool polling = options_.repository_poll_s > 0;
      auto wake = [&] { return stopping_ || !tasks_.empty(); };
      if (polling) cv_.wait_until(lock, next_poll, wake);
      else cv_.wait(lock, wake);
      if (stopping_) return;
      if (!tasks_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
    }
    if (task) {
      task();
    } else if (std::chrono::steady_clock::now() >= next_poll) {
      poll_once();
      next_poll = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(options_.repository_poll_s * 1000));
    }
  }
}

void ModelRepository::load_all(std::function<void()> done) {
  post([this, done = std::move(done)] {
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [name, slot] : slots_) names.push_back(name);
    }
    for (const auto& name : names) load_now(name);
    {
      std::lock_guard<std::mutex> lock(mu_);
      first_pass_done_ = true;
    }
    done();
  });
}

void ModelRepository::load(const std::string& name, std::function<void(int, std::string)> done) {
  post([this, name, done = std::move(done)] {
    auto [status, message] = load_now(name);
    done(status, message);
  });
}

std::pair<int, std::string> ModelRepository::load_now(const std::string& name) {
  std::string folder;
  int64_t others = 0;  // the memory accounts of the loaded models (docs/memory.md)
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(name);
    if (it == slots_.end() && !options_.model_repository.empty()) {
      if (auto f = repository_folder(options_.model_repository, name)) {
        Slot slot;
        slot.folder = *f;
        it = slots_.emplace(name, std::move(slot)).first;
      }
    }
    if (it == slots_.end()) return {404, "model '" + name + "' is not in the repository"};
    folder = it->second.folder;
    for (const auto& [other, slot] : slots_)  // ServerOptions::max_memory: a version being replaced still counts
      if (slot.current) others += slot.current->memory_bytes;
    if (!it->second.current) {
      it->second.state = "LOADING";
      it->second.reason = "loading";
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto version = resolve_version(folder);
  Result<std::shared_ptr<const LoadedModel>> loaded =
      version.ok() ? load_model_version(name, version->version, version->dir, engine_, options_, metrics_, others)
                   : Result<std::shared_ptr<const LoadedModel>>(std::move(version).take_error().with_where("model '" + name + "'"));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  if (on_load_) on_load_(name, loaded.ok());
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[name];
  if (!loaded.ok()) {
    const std::string why = loaded.error().to_string();
    log_line("load of model '" + name + "' failed after " + std::to_string(ms) + " ms: " + why +
             (slot.current ? " (version " + slot.current->version + " keeps serving)" : ""));
    if (slot.current) {
      slot.reason = "last load failed: " + why;
    } else {
      slot.state = "UNAVAILABLE";
      slot.reason = why;
    }
    return {400, "failed to load model '" + name + "': " + why};
  }
  const std::string before = slot.current ? slot.current->version : "";
  slot.current = std::move(loaded).value();  // the swap: requests already running keep the old version alive
  slot.state = "READY";
  slot.reason = slot.current->warmup_error.empty() ? "" : "ready without warm-up: " + slot.current->warmup_error;
  auto loaded_version = resolve_version(folder);
  slot.signature = loaded_version.ok() ? signature_of(*loaded_version) : "";
  log_line("model '" + name + "' version " + slot.current->version + " ready (loaded and " +
           (slot.reason.empty() ? "warmed" : "NOT warmed") + " in " + std::to_string(ms) + " ms" +
           (before.empty() ? "" : ", replaced version " + before) + ")" + (slot.reason.empty() ? "" : ": " + slot.reason));
  return {200, ""};
}

void ModelRepository::unload(const std::string& name, std::function<void(int, std::string)> done) {
  post([this, name, done = std::move(done)] {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = slots_.find(name);
    if (it == slots_.end()) {
      lock.unlock();
      return done(404, "model '" + name + "' is not in the repository");
    }
    it->second.current.reset();  // in-flight requests hold their own reference until they finish
    it->second.state = "UNAVAILABLE";
    it->second.reason = "unloaded";
    it->second.signature.clear();
    lock.unlock();
    log_line("model '" + name + "' unloaded");
    done(200, "");
  });
}

void ModelRepository::poll_once() {
  std::vector<std::string> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, slot] : slots_) {
      if (slot.state == "UNAVAILABLE" && slot.reason == "unloaded") continue;  // unloaded on purpose
      auto v = resolve_version(slot.folder);
      if (v.ok() && signature_of(*v) != slot.signature) changed.push_back(name);
    }
  }
  for (const auto& name : changed) {
    log_line("model '" + name + "' changed on disk: reloading");
    auto [status, message] = load_now(name);
    if (status != 200) {
      // Remember the failed files so an unchanged broken version is not retried every poll.
      std::lock_guard<std::mutex> lock(mu_);
      auto v = resolve_version(slots_[name].folder);
      if (v.ok()) slots_[name].signature = signature_of(*v);
    }
  }
}

ModelLookup ModelRepository::get(const std::string& name, const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(name);
  if (it == slots_.end()) return {nullptr, 404, "model '" + name + "' is not known to this server"};
  const Slot& s = it->second;
  if (!s.current) return {nullptr, 503, "model '" + name + "' is not ready (" + s.state + ": " + s.reason + ")"};
  if (!version.empty() && version != s.current->version)
    return {nullptr, 404, "version " + version + " of model '" + name + "' is not loaded (serving version " + s.current->version + ")"};
  return {s.current, 200, ""};
}

ModelLookup ModelRepository::default_text_model(PipelineTask task) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<const LoadedModel> hit;
  int count = 0;
  for (const auto& [name, slot] : slots_) {
    if (!slot.current || !slot.current->pipeline || slot.current->pipeline->decisions().task != task) continue;
    hit = slot.current;
    ++count;
  }
  const char* kind = task == PipelineTask::kClassify ? "classification" : "embedding";
  if (count == 0) return {nullptr, 400, std::string("no ") + kind + " text model is ready on this server"};
  if (count > 1) return {nullptr, 400, std::string("several ") + kind + " models are loaded: name one with \"model\""};
  return {hit, 200, ""};
}

std::vector<IndexEntry> ModelRepository::index() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<IndexEntry> out;
  for (const auto& [name, slot] : slots_)
    out.push_back({name, slot.current ? slot.current->version : "", slot.state, slot.reason,
                   slot.current ? slot.current->warmup : nlohmann::ordered_json()});
  return out;
}

bool ModelRepository::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!first_pass_done_) return false;
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& kv) { return kv.second.current != nullptr; });
}

}  // namespace glassbox::server
