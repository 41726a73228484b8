// Fixed-size thread pool for intra-op parallelism. The calling thread takes part in
// every parallel_for, so ThreadPool(1) runs everything inline.
//
// Work is claimed, not assigned: a parallel_for is cut into chunks that the
// caller and the workers take from a shared counter. On a loaded machine a
// worker that is not scheduled in time simply takes no chunk, and the caller
// never waits for a thread that has not started (with a fixed assignment, one
// descheduled worker stalled the whole op).
//
// Waiting (Wait, SessionOptions::pool_wait): an idle worker sleeps on a condition
// variable; with kSpin / kAuto it may first poll for the next job for up to
// kSpinBudget, and the caller may poll as long for the workers' last chunks before it
// blocks. An inference run issues one parallel_for per op back to back (~100-250 per
// encoder run, microseconds apart); waking a sleeping worker through the kernel costs
// tens of microseconds on a VM and lands after the caller has taken most chunks.
// Spinning happens only while a run is in progress (RunScope), never between runs.
// kAuto spins only while SpinGate says the machine has a core for us (see thread_pool.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace glassbox {

class ThreadPool {
 public:
  // kSleep: block on the kernel at once (costs nothing when idle or when cores are scarce).
  // kSpin: poll up to kSpinBudget during runs, whatever the machine's load.
  // kAuto: as kSpin while the machine has a core for each of our threads besides the other
  // processes' runnable ones, and no spinner was preempted recently; else as kSleep.
  enum class Wait { kSleep, kSpin, kAuto };
  static constexpr std::chrono::microseconds kSpinBudget{200};

  explicit ThreadPool(int threads, Wait wait = Wait::kSleep);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  Wait wait() const { return wait_; }

  // Runs fn(begin, end) over [0, n) split into contiguous chunks of at least
  // `grain` items (at most kChunksPerThread * size() of them); blocks until all
  // chunks are done. fn must accept any sub-range. Not re-entrant: a fn running
  // inside parallel_for must not call parallel_for on the same pool (such nested
  // calls, and calls while another thread's parallel_for runs, run inline).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Chunks per thread: enough for the caller to absorb a late worker's share,
  // few enough that per-chunk overhead stays negligible.
  static constexpr int kChunksPerThread = 4;

  // While one is alive (any thread, nestable), idle threads of this pool may spin
  // (Wait kSpin/kAuto); when the last one ends, spinning workers go to sleep.
  class RunScope {
   public:
    explicit RunScope(ThreadPool& pool) : pool_(pool) { pool_.runs_.fetch_add(1, std::memory_order_relaxed); }
    ~RunScope() { pool_.runs_.fetch_sub(1, std::memory_order_relaxed); }
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

   private:
    ThreadPool& pool_;
  };

 private:
  void worker_loop();
  void run_chunks();
  bool may_spin() const;
  bool spin_until_job(uint64_t seen) const;
  void finish_job();

  int threads_;
  Wait wait_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The current job (set and cleared under mu_; chunks claimed through next_).
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  std::atomic<int> next_{0};
  std::atomic<uint64_t> generation_{0};  // written under mu_; read without it while spinning
  std::atomic<int> active_{0};            // workers inside run_chunks for the current job
  std::atomic<int> runs_{0};              // live RunScopes
  std::atomic<bool> stop_{false};
  bool busy_ = false;
};

// kAuto's decision, process-wide (every pool of the process shares one machine).
namespace spin_gate {
// spin_gate::allowed_for(1) (core/spin_gate.h): true while the last sample (taken at most
// every kSamplePeriod by whichever thread asks) left a core for our running threads besides
// the other processes' runnable ones, and no spinner saw itself preempted within the last
// kBackoff. False if /proc cannot be read.
bool allowed();
// A spinner saw a gap far above its poll period between two clock reads: it was
// descheduled, so some other thread wanted its core. Blocks spinning for kBackoff.
void preempted();
constexpr std::chrono::milliseconds kSamplePeriod{100};
constexpr std::chrono::milliseconds kBackoff{100};
// Clock reads of a spin loop are ~1-3 us apart; a gap above this + a context switch: preempted.
constexpr std::chrono::microseconds kPreemptedGap{50};
// Parses /proc/loadavg's "a b c RUNNABLE/TOTAL last_pid": RUNNABLE, or -1 (for tests).
int parse_runnable(const char* loadavg_text);
}  // namespace spin_gate

}  // namespace glassbox
