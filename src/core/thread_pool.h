// Fixed-size thread pool for intra-op parallelism. Workers sleep on a
// condition variable when idle (no busy spinning); the calling thread takes
// part in every parallel_for, so ThreadPool(1) runs everything inline.
//
// Work is claimed, not assigned: a parallel_for is cut into chunks that the
// caller and the workers take from a shared counter. On a loaded machine a
// worker that is not scheduled in time simply takes no chunk, and the caller
// never waits for a thread that has not started (with a fixed assignment, one
// descheduled worker stalled the whole op).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace glassbox {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Runs fn(begin, end) over [0, n) split into contiguous chunks of at least
  // `grain` items (at most kChunksPerThread * size() of them); blocks until all
  // chunks are done. fn must accept any sub-range. Not re-entrant: a fn running
  // inside parallel_for must not call parallel_for on the same pool (such nested
  // calls, and calls while another thread's parallel_for runs, run inline).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Chunks per thread: enough for the caller to absorb a late worker's share,
  // few enough that per-chunk overhead stays negligible.
  static constexpr int kChunksPerThread = 4;

 private:
  void worker_loop();
  void run_chunks();

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The current job (set and cleared under mu_; chunks claimed through next_).
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  std::atomic<int> next_{0};
  uint64_t generation_ = 0;
  int active_ = 0;  // workers inside run_chunks for the current job
  bool stop_ = false;
  bool busy_ = false;
};

}  // namespace glassbox
