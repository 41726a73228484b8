// The one place work meets the engine. Requests become work items in a bounded queue; one
// dispatcher thread runs one engine run at a time, server-wide, each on the session's
// threads (--threads), so several models never oversubscribe the cores. Text items of one
// model and task that are waiting together run as one pipeline call (the pipeline batches
// them, unpadded where the model allows), and their results are handed back per request.
// Work whose client has gone or whose deadline has passed is dropped before compute.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "glassbox/pipeline.h"
#include "server/repository/loaded_model.h"

namespace glassbox::server {

struct TextResults {
  std::vector<Classification> classes;  // classify: every label, sorted by score
  std::vector<Embedding> embeddings;
};

struct TextJob {
  PipelineTask task = PipelineTask::kClassify;
  std::vector<PipelineInput> inputs;
  std::optional<bool> normalize;  // embed: overrides the declared decision
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
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Called instead of the job's done when the item is dropped before compute.
  std::function<void(int status, const std::string& message)> reject;
};

struct SchedulerOptions {
  int max_queue = 0;        // items waiting per model before 429
  int max_batch_size = 0;   // texts merged into one pipeline call
};

struct Refusal {
  int status;
  std::string message;
  int retry_after_s = 0;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options);
  ~Scheduler();
  // Queues the item, or says at once why not (queue full: 429 with Retry-After).
  std::optional<Refusal> submit(WorkItem item);
  // Items waiting (all models).
  int64_t queued() const;
  // Stops the dispatcher: after running what is queued, or (run_queued false, a drain that
  // timed out) answering it 503.
  void stop(bool run_queued = true);

 private:
  void dispatch();
  void run_text(std::vector<WorkItem>& items);
  std::vector<WorkItem> take_batch(std::unique_lock<std::mutex>& lock);

  SchedulerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WorkItem> queue_;
  bool stopping_ = false;
  bool drop_queued_ = false;
  std::thread thread_;
};

}  // namespace glassbox::server
