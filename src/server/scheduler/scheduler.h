// The one place work meets the engine. Requests become work items in a bounded queue per
// model (full: 429 with Retry-After from the measured service time); text requests are tokenized
// by submit, on the caller's thread, before they queue (an input the pipeline refuses is answered
// there and never queues), so the dispatcher only batches and runs; one dispatcher thread
// runs one engine run at a time, server-wide, each on the session's threads (--threads), so
// several models never oversubscribe the cores. Text items of one model and task are batched
// by token budget: texts waiting together fill an engine run up to max_batch_tokens real tokens
// and max_batch_size texts (a request's texts may span runs and are reassembled in order), run
// unpadded where the model allows. Tensor requests whose inputs share all but the first (batch)
// dimension are concatenated the same way. Work whose client has gone or whose deadline has
// passed is dropped before compute. Policy: FIFO across models (high priority first), one run
// at a time; declared in `glassbox explain --serve`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "glassbox/embedding_heads.h"
#include "glassbox/pipeline.h"
#include "server/http/http_types.h"
#include "server/metrics/metrics.h"
#include "server/repository/loaded_model.h"
#include "server/scheduler/numerics_sampling.h"
#include "server/server_options.h"

namespace glassbox::server {

struct TextResults {
  std::vector<Classification> classes;  // classify: every label, sorted by score
  std::vector<Embedding> embeddings;      // embed: one per text; token_vectors: [tokens x hidden] flattened
  // Set when an input was split into windows (PipelineInput::split_windows): the input each result
  // belongs to (ascending; max_over_windows folds them). Empty: one result per input, in order.
  std::vector<size_t> source;
  std::vector<HeadEmbeddings> heads;  // a heads job: per text, the heads it asked for (the others nullopt)
};

struct TextJob {
  PipelineTask task = PipelineTask::kClassify;
  std::vector<PipelineInput> inputs;
  std::optional<bool> normalize;  // embed: overrides the declared decision
  std::optional<int64_t> dimensions;  // embed: Matryoshka, keep the first N values (then normalize)
  bool token_vectors = false;     // embed: token-level vectors (Pipeline::embed_tokens_encoded), no pooling
  // embed on a model with glassbox.json "heads": these of its declared heads ("dense", "sparse", "multi_vector"),
  // in TextResults::heads. One engine run per batch reads every declared head (embed_heads_encoded), so heads
  // jobs of one model batch together whatever heads each asks for.
  std::vector<std::string> heads;
  std::function<void(Result<TextResults>)> done;
};

struct TensorJob {
  std::vector<NamedTensor> feeds;
  std::function<void(Result<std::vector<NamedTensor>>)> done;
};

// Work that needs no engine run but should not block an IO thread (tokenize, decode).
struct TaskJob {
  std::function<void()> run;
};

struct WorkItem {
  std::shared_ptr<const LoadedModel> model;
  std::variant<TextJob, TensorJob, TaskJob> job;
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::shared_ptr<RequestMeta> meta;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool high_priority = false;
  // Called instead of the job's done when the item is dropped before compute.
  std::function<void(Refusal)> reject;
};

class Scheduler {
 public:
  // Reads its limits (max_queue, max_batch_tokens, max_batch_size, max_queue_delay_ms,
  // saturation_threshold) from `options`, which must outlive it: no copy of any limit.
  Scheduler(const ServerOptions& options, Metrics* metrics);
  ~Scheduler();
  // Queues the item (a text item tokenized first), or says at once why not (queue full: 429 with
  // Retry-After; stopping: draining). A text item whose input the pipeline refuses is answered through its
  // done callback before submit returns (nullopt).
  std::optional<Refusal> submit(WorkItem item);
  // Requests waiting, per model name.
  std::map<std::string, int64_t> queue_depths() const;
  // Stops the dispatcher: after running what is queued, or (run_queued false, a drain that
  // timed out) answering it 503.
  void stop(bool run_queued = true);

  struct Pending;
  struct TextWork;

 private:
  void dispatch();
  // Text work: the batch led by `head` is taken from the queue with the lock held (no tokenizing there:
  // submit did it), then run with no lock held.
  TextWork take_text_work(const std::shared_ptr<Pending>& head);
  void run_text(TextWork work);
  void run_tensor(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Pending>& head);
  bool drop_if_dead(const std::shared_ptr<Pending>& p);
  std::optional<Refusal> admission(const std::string& model_name) const;  // lock held
  void wait_for_more(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Pending>& head);
  void remove(const std::shared_ptr<Pending>& p);
  void note_service(const std::string& model, double seconds, size_t items);

  const ServerOptions& options_;
  Metrics* metrics_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Pending>> queue_;
  std::map<std::string, double> seconds_per_item_;  // EWMA per model, for Retry-After
  NumericsSampler numerics_{options_};               // --numerics-check: which runs carry the observer
  bool stopping_ = false;
  bool drop_queued_ = false;
  std::thread thread_;
};

}  // namespace glassbox::server
