// Fixed-size thread pool for intra-op parallelism. Workers sleep on a
// condition variable when idle (no busy spinning); the calling thread takes
// part in every parallel_for, so ThreadPool(1) runs everything inline.
#pragma once

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

  // Runs fn(begin, end) over [0, n) split into at most size() contiguous chunks
  // of at least `grain` items; blocks until all chunks are done. Not re-entrant:
  // a fn running inside parallel_for must not call parallel_for on the same pool
  // (such nested calls run inline).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker_loop(int index);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  bool busy_ = false;
};

}  // namespace glassbox
