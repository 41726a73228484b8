#include "server/scheduler/scheduler.h"

#include <algorithm>
#include <cmath>

#include "server/log.h"
#include "server/scheduler/pending.h"

namespace glassbox::server {

Scheduler::Scheduler(const ServerOptions& options, Metrics* metrics) : options_(options), metrics_(metrics) {
  thread_ = std::thread([this] { dispatch(); });
}

Scheduler::~Scheduler() { stop(); }

std::optional<Refusal> Scheduler::submit(WorkItem item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto refused = admission(item.model->name)) return refused;  // refused before any tokenizing
  }
  auto p = std::make_shared<Pending>();
  p->item = std::move(item);
  // Text work is tokenized here, on the caller's thread and before it queues, so the dispatcher only batches
  // and runs; an input the pipeline refuses answers the request now.
  if (std::holds_alternative<TextJob>(p->item.job)) {
    encode_texts(*p, metrics_);
    if (p->finished) return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto refused = admission(p->item.model->name)) return refused;  // again: other requests may have queued meanwhile
  p->enqueued = std::chrono::steady_clock::now();
  if (p->item.high_priority) {
    auto at = std::find_if(queue_.begin(), queue_.end(), [](const auto& q) { return !q->item.high_priority && !q->started; });
    queue_.insert(at, std::move(p));
  } else {
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
  return std::nullopt;
}

// Whether a new item for `name` may queue (called with the lock held): not while stopping, not over max_queue
// waiting items of the model (429 with Retry-After from the measured service time).
std::optional<Refusal> Scheduler::admission(const std::string& name) const {
  if (stopping_) return Refusal{RefusalCode::kDraining, "server is shutting down: no new work is admitted", {}, 0, true};
  const int64_t waiting = std::count_if(queue_.begin(), queue_.end(), [&](const auto& p) { return p->item.model->name == name; });
  if (waiting >= options_.max_queue) {
    // Retry-After: the queue's expected drain time from the measured seconds per request.
    auto it = seconds_per_item_.find(name);
    const double per = it == seconds_per_item_.end() ? 0.1 : it->second;
    const int retry = std::max(1, static_cast<int>(std::ceil(per * static_cast<double>(waiting))));
    return Refusal{RefusalCode::kQueueFull,
                   "model '" + name + "' has " + std::to_string(waiting) +
                       " requests waiting (the server's max_queue): retry after " + std::to_string(retry) + " s",
                   {}, retry};
  }
  return std::nullopt;
}

std::map<std::string, int64_t> Scheduler::queue_depths() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int64_t> out;
  for (const auto& p : queue_) ++out[p->item.model->name];
  return out;
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

void Scheduler::remove(const std::shared_ptr<Pending>& p) {
  auto it = std::find(queue_.begin(), queue_.end(), p);
  if (it != queue_.end()) queue_.erase(it);
}

// An item not yet started whose client has gone or whose deadline passed is answered and
// leaves the queue (the caller holds no lock). Returns true if it was dropped.
bool Scheduler::drop_if_dead(const std::shared_ptr<Pending>& p) {
  if (p->started || p->finished) return false;
  // A deadline that has passed explains a cancel (gRPC cancels a call at its deadline): counted as deadline.
  const bool late = p->item.deadline <= std::chrono::steady_clock::now();
  const bool gone = !late && p->item.cancelled && p->item.cancelled->load();
  if (!gone && !late) return false;
  p->finished = true;
  const std::string why = std::string("dropped a request for model '") + p->item.model->name + "' before compute: " +
                          (gone ? "the client closed the connection" : "its deadline passed");
  if (p->item.meta) log_request_event(why, *p->item.meta);
  else log_line(why);
  p->item.reject(gone ? Refusal{RefusalCode::kCancelled, "client closed the connection before compute"}
                      : Refusal{RefusalCode::kDeadline, "deadline passed before compute (the request's timeout)"});
  return true;
}

void Scheduler::note_service(const std::string& model, double seconds, size_t items) {
  if (items == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const double per = seconds / static_cast<double>(items);
  auto [it, fresh] = seconds_per_item_.emplace(model, per);
  if (!fresh) it->second = 0.8 * it->second + 0.2 * per;
}

void Scheduler::wait_for_more(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Pending>& head) {
  if (options_.max_queue_delay_ms <= 0 || head->started) return;
  const auto until = head->enqueued + std::chrono::milliseconds(options_.max_queue_delay_ms);
  cv_.wait_until(lock, until, [&] {
    if (stopping_) return true;
    const auto same = std::count_if(queue_.begin(), queue_.end(), [&](const auto& p) { return p->item.model == head->item.model; });
    return same >= options_.max_batch_size;
  });
}

void Scheduler::dispatch() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_ && drop_queued_) {
      auto left = std::move(queue_);
      queue_.clear();
      lock.unlock();
      for (auto& p : left)
        if (!p->finished) p->item.reject(Refusal{RefusalCode::kDraining, "server stopped before this request was computed", {}, 0, true});
      return;
    }
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::shared_ptr<Pending> head = queue_.front();
    if (std::holds_alternative<TextJob>(head->item.job)) {
      wait_for_more(lock, head);
      TextWork work = take_text_work(head);
      head.reset();
      lock.unlock();
      run_text(std::move(work));
      lock.lock();
    } else if (std::holds_alternative<TensorJob>(head->item.job)) {
      run_tensor(lock, head);
    } else {
      queue_.pop_front();
      lock.unlock();
      if (!drop_if_dead(head)) std::get<TaskJob>(head->item.job).run();
      head.reset();  // the model version the item held is released outside the lock
      lock.lock();
    }
  }
}

}  // namespace glassbox::server
