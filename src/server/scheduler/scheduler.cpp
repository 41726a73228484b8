#include "server/scheduler/scheduler.h"

#include <algorithm>

#include "server/log.h"

namespace glassbox::server {
namespace {

bool same_batch(const WorkItem& a, const WorkItem& b) {
  const auto* ta = std::get_if<TextJob>(&a.job);
  const auto* tb = std::get_if<TextJob>(&b.job);
  return ta && tb && a.model == b.model && ta->task == tb->task && ta->normalize == tb->normalize;
}

size_t text_count(const WorkItem& w) {
  const auto* t = std::get_if<TextJob>(&w.job);
  return t ? t->inputs.size() : 1;
}

// Hands each job its slice of the merged results.
void deliver(std::vector<WorkItem>& items, Result<TextResults>& merged) {
  size_t at = 0;
  for (auto& w : items) {
    auto& job = std::get<TextJob>(w.job);
    if (!merged.ok()) {
      job.done(merged.error());
      continue;
    }
    TextResults mine;
    const size_t n = job.inputs.size();
    if (job.task == PipelineTask::kClassify)
      mine.classes.assign(std::make_move_iterator(merged->classes.begin() + at), std::make_move_iterator(merged->classes.begin() + at + n));
    else
      mine.embeddings.assign(std::make_move_iterator(merged->embeddings.begin() + at),
                             std::make_move_iterator(merged->embeddings.begin() + at + n));
    at += n;
    job.done(std::move(mine));
  }
}

Result<TextResults> run_pipeline(const LoadedModel& m, const TextJob& first, const std::vector<PipelineInput>& inputs) {
  TextResults r;
  if (first.task == PipelineTask::kClassify) {
    const int all = static_cast<int>(m.pipeline->decisions().labels.size());
    GB_ASSIGN_OR_RETURN(r.classes, m.pipeline->classify(inputs, all));
  } else {
    GB_ASSIGN_OR_RETURN(r.embeddings, m.pipeline->embed(inputs, first.normalize));
  }
  return r;
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options) : options_(options) {
  thread_ = std::thread([this] { dispatch(); });
}

Scheduler::~Scheduler() { stop(); }

std::optional<Refusal> Scheduler::submit(WorkItem item) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return Refusal{503, "server is shutting down: no new work is admitted"};
  const int64_t waiting = std::count_if(queue_.begin(), queue_.end(), [&](const WorkItem& w) { return w.model == item.model; });
  if (waiting >= options_.max_queue)
    return Refusal{429, "model '" + item.model->name + "' has " + std::to_string(waiting) +
                            " requests waiting, the server's max_queue: retry later", 1};
  queue_.push_back(std::move(item));
  cv_.notify_one();
  return std::nullopt;
}

int64_t Scheduler::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(queue_.size());
}

void Scheduler::stop(bool run_queued) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    drop_queued_ = !run_queued;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// The first waiting item, plus the text items of the same model and task behind it, up to
// max_batch_size texts. Dropped items (client gone, deadline passed) are answered here.
std::vector<WorkItem> Scheduler::take_batch(std::unique_lock<std::mutex>& lock) {
  std::vector<WorkItem> batch, dropped;
  const auto now = std::chrono::steady_clock::now();
  size_t texts = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const bool gone = it->cancelled && it->cancelled->load();
    if (gone || it->deadline <= now) {
      dropped.push_back(std::move(*it));
      it = queue_.erase(it);
      continue;
    }
    if (batch.empty() || (same_batch(batch.front(), *it) && texts + text_count(*it) <= static_cast<size_t>(options_.max_batch_size))) {
      texts += text_count(*it);
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
      if (!std::holds_alternative<TextJob>(batch.front().job)) break;
      continue;
    }
    ++it;
  }
  lock.unlock();
  for (auto& w : dropped) {
    const bool gone = w.cancelled && w.cancelled->load();
    log_line("dropped a request for model '" + w.model->name + "' before compute: " +
             (gone ? "the client closed the connection" : "its deadline passed"));
    w.reject(gone ? 499 : 504, gone ? "client closed the connection before compute" : "deadline passed before compute");
  }
  lock.lock();
  return batch;
}

void Scheduler::dispatch() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_ && drop_queued_) {
      std::deque<WorkItem> left;
      left.swap(queue_);
      lock.unlock();
      for (auto& w : left) w.reject(503, "server stopped before this request was computed");
      return;
    }
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::vector<WorkItem> batch = take_batch(lock);
    if (batch.empty()) continue;
    lock.unlock();
    if (std::holds_alternative<TextJob>(batch.front().job)) {
      run_text(batch);
    } else if (auto* t = std::get_if<TensorJob>(&batch.front().job)) {
      t->done(batch.front().model->engine().run(t->feeds));
    } else {
      std::get<TaskJob>(batch.front().job).run();
    }
    batch.clear();  // releases the model versions the items held before the next wait
    lock.lock();
  }
}

void Scheduler::run_text(std::vector<WorkItem>& items) {
  const LoadedModel& m = *items.front().model;
  const TextJob& first = std::get<TextJob>(items.front().job);
  std::vector<PipelineInput> inputs;
  for (const auto& w : items) {
    const auto& j = std::get<TextJob>(w.job);
    inputs.insert(inputs.end(), j.inputs.begin(), j.inputs.end());
  }
  Result<TextResults> merged = run_pipeline(m, first, inputs);
  if (merged.ok() || items.size() == 1) return deliver(items, merged);
  // One request's bad input must not fail the others merged with it: run each alone.
  for (auto& w : items) {
    std::vector<WorkItem> one;
    one.push_back(std::move(w));
    Result<TextResults> r = run_pipeline(m, std::get<TextJob>(one.front().job), std::get<TextJob>(one.front().job).inputs);
    deliver(one, r);
  }
}

}  // namespace glassbox::server
