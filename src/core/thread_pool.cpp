#include "core/thread_pool.h"

#include <algorithm>

namespace glassbox {
namespace {
void chunk_range(int64_t n, int chunks, int index, int64_t& begin, int64_t& end) {
  const int64_t base = n / chunks, rem = n % chunks;
  begin = index * base + std::min<int64_t>(index, rem);
  end = begin + base + (index < rem ? 1 : 0);
}
}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// Claims chunks of the current job until none is left. job_/job_n_/job_chunks_
// are stable while the caller waits for active_ == 0 and runs chunks itself.
void ThreadPool::run_chunks() {
  for (;;) {
    const int c = next_.fetch_add(1, std::memory_order_relaxed);
    if (c >= job_chunks_) return;
    int64_t b, e;
    chunk_range(job_n_, job_chunks_, c, b, e);
    if (b < e) (*job_)(b, e);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen); });
    if (stop_) return;
    seen = generation_;
    ++active_;
    lock.unlock();
    run_chunks();
    lock.lock();
    if (--active_ == 0) done_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int chunks = static_cast<int>(std::min<int64_t>(int64_t{threads_} * kChunksPerThread, (n + grain - 1) / grain));
  bool inline_run = chunks <= 1 || threads_ == 1;
  if (!inline_run) {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_) {
      inline_run = true;  // nested call, or another thread's job is running
    } else {
      busy_ = true;
      job_ = &fn;
      job_n_ = n;
      job_chunks_ = chunks;
      next_.store(0, std::memory_order_relaxed);
      ++generation_;
    }
  }
  if (inline_run) {
    fn(0, n);
    return;
  }
  wake_.notify_all();
  run_chunks();
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return active_ == 0; });
  job_ = nullptr;
  busy_ = false;
}

}  // namespace glassbox
