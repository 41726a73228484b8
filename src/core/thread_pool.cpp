#include "core/thread_pool.h"
#include "core/spin_gate.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GLASSBOX_CPU_RELAX() _mm_pause()
#else
#define GLASSBOX_CPU_RELAX() std::this_thread::yield()
#endif

// How kAuto decides (SessionOptions::pool_wait, docs/runtime.md "Pool waiting"):
// a spinning thread only helps when it has a core of its own. On a machine whose cores
// are all taken (here: 2 cores shared by several processes), a spinner holds the core
// that the descheduled caller or a worker with real work needs, and a run got 3.5x
// slower (h/fp32-spin under load 10). So kAuto spins only when all three hold:
//  1. a run is in progress (RunScope): never between runs, whatever the mode;
//  2. the machine has a core for each of our threads: the other processes' runnable
//     threads (/proc/loadavg's count minus our own threads in state R, counted in
//     /proc/self/task right after) plus max(our running threads, the asking pool's size)
//     are <= the CPUs this process may run on. For one 2-thread run on 2 CPUs this is the
//     old test (machine count <= CPUs) while both threads run; it differs when our other
//     thread happens to sleep at the sample (it will want its core back) or more threads
//     of ours run. Niced tasks count: with autogroup scheduling (on here) a nice-19 task
//     of another session gets an equal share against ours, and spinning next to niced
//     compiles was slower than sleeping (docs/benchmarks-history.md "Pool waiting: the gate").
//     Sampled at most every 100 ms by whichever thread asks (a few open/read/close);
//  3. no spinner of this process saw itself preempted in the last 100 ms: a spin loop
//     reads the clock every 32 polls (~1-2 us apart); a gap above 50 us with a new
//     involuntary context switch of the thread (getrusage, read only at such a gap and at
//     most every 10 ms when a poll starts) means another task of this machine took the
//     core, so it stops at once. A gap without a switch (an interrupt, the hypervisor
//     pausing the vCPU: ~35-150 per second of spinning on this VM) is not a preemption.
// Each wait spins at most kSpinBudget (200 us), then sleeps on the condition variable.
namespace glassbox {
namespace {

using Clock = std::chrono::steady_clock;

void chunk_range(int64_t n, int chunks, int index, int64_t& begin, int64_t& end) {
  const int64_t base = n / chunks, rem = n % chunks;
  begin = index * base + std::min<int64_t>(index, rem);
  end = begin + base + (index < rem ? 1 : 0);
}

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

int usable_cpus() {
  static const int n = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

// Reads a small /proc file into buf (NUL-terminated); false when it cannot.
template <size_t N>
bool read_proc(const char* path, char (&buf)[N]) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t got = ::read(fd, buf, N - 1);
  ::close(fd);
  if (got <= 0) return false;
  buf[got] = '\0';
  return true;
}

// Runnable threads on the machine now, or -1 when /proc/loadavg cannot be read.
int runnable_threads() {
  char buf[128];
  return read_proc("/proc/loadavg", buf) ? spin_gate::parse_runnable(buf) : -1;
}

// Threads of this process in state R now (the caller included), or -1 when
// /proc/self/task cannot be listed. A thread that exits meanwhile is skipped.
int own_running_threads() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return -1;
  int running = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[288], buf[512];  // the stat line's state is within its first ~40 bytes
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
    if (read_proc(path, buf) && spin_gate::parse_task_running(buf) == 1) ++running;
  }
  ::closedir(dir);
  return running;
}

std::atomic<int64_t> g_next_sample_ns{0};
std::atomic<int64_t> g_blocked_until_ns{0};
// The last sample, machine runnable << 32 | own running (each as uint32, -1 if unreadable).
std::atomic<uint64_t> g_sample{~uint64_t{0}};

// This thread's involuntary context switches (getrusage), -1 if unknown. A poll gap is a
// preemption only if this count moved: on this VM a spinner also sees ~35-150 gaps/s of
// 50 us-3 ms with no switch at all (interrupts, the hypervisor), which no task here caused.
long involuntary_switches() {
  rusage ru;
  return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
}
// The count at the thread's last check, refreshed at most every 10 ms when a poll starts
// (not a syscall per wait); a switch since then counts as a preemption (conservative).
thread_local long t_switches = -1;
thread_local Clock::time_point t_switches_at{};
constexpr std::chrono::milliseconds kSwitchBaselineAge{10};

void set_switch_baseline(Clock::time_point now) {
  t_switches = involuntary_switches();
  t_switches_at = now;
}

bool switched_out_since_baseline(Clock::time_point now) {
  const long before = t_switches;
  set_switch_baseline(now);
  return t_switches < 0 || before < 0 || t_switches != before;
}

// Polls until done() (true) or, false: the budget is spent, no run is in progress any
// more, or (kAuto) this thread was preempted while polling.
template <class Done>
bool poll(ThreadPool::Wait wait, const std::atomic<int>& runs, Done&& done) {
  auto last = Clock::now();
  const auto until = last + ThreadPool::kSpinBudget;
  const bool autowait = wait == ThreadPool::Wait::kAuto;
  if (autowait && last - t_switches_at > kSwitchBaselineAge) set_switch_baseline(last);
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    if (runs.load(std::memory_order_relaxed) == 0) return false;
    GLASSBOX_CPU_RELAX();
    if (i % 32 != 0) continue;
    const auto now = Clock::now();
    if (autowait && now - last > spin_gate::kPreemptedGap && switched_out_since_baseline(now)) {
      spin_gate::preempted();
      return false;
    }
    if (now > until) return false;
    last = now;
  }
}

}  // namespace

namespace spin_gate {

int parse_runnable(const char* text) {
  // "0.52 0.58 0.59 2/345 12345": the fourth field's numerator.
  const char* slash = std::strchr(text, '/');
  if (!slash) return -1;
  const char* p = slash;
  while (p > text && p[-1] >= '0' && p[-1] <= '9') --p;
  if (p == slash || (p > text && p[-1] != ' ')) return -1;
  return std::atoi(p);
}

int parse_task_running(const char* text) {
  // "1234 (glassbox) R 1 ...": the state follows the last ')' and one space.
  const char* close = std::strrchr(text, ')');
  if (!close || close[1] != ' ' || close[2] == '\0') return -1;
  return close[2] == 'R' ? 1 : 0;
}

bool core_free(int machine_runnable, int own_running, int demand, int cpus) {
  if (machine_runnable < 0 || own_running < 0 || demand < 0 || cpus < 1) return false;
  const int others = std::max(0, machine_runnable - own_running);  // the two reads are not atomic
  return others + std::max(own_running, demand) <= cpus;
}

bool allowed() { return allowed_for(1); }

bool allowed_for(int threads) {
  const int64_t now = now_ns();
  if (now < g_blocked_until_ns.load(std::memory_order_relaxed)) return false;
  int64_t due = g_next_sample_ns.load(std::memory_order_relaxed);
  if (now >= due && g_next_sample_ns.compare_exchange_strong(
                        due, now + std::chrono::duration_cast<std::chrono::nanoseconds>(kSamplePeriod).count())) {
    const int machine = runnable_threads();
    const int own = own_running_threads();
    g_sample.store(uint64_t{static_cast<uint32_t>(machine)} << 32 | static_cast<uint32_t>(own),
                   std::memory_order_relaxed);
  }
  const uint64_t sample = g_sample.load(std::memory_order_relaxed);
  return core_free(static_cast<int32_t>(sample >> 32), static_cast<int32_t>(sample & 0xffffffffu), threads,
                   usable_cpus());
}

void preempted() {
  g_blocked_until_ns.store(now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(kBackoff).count(),
                           std::memory_order_relaxed);
}

}  // namespace spin_gate

ThreadPool::ThreadPool(int threads, Wait wait) : threads_(std::max(1, threads)), wait_(wait) {
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

bool ThreadPool::may_spin() const {
  if (wait_ == Wait::kSleep || runs_.load(std::memory_order_relaxed) == 0) return false;
  return wait_ == Wait::kSpin || spin_gate::allowed_for(threads_);
}

// Polls (without the lock) for a job newer than `seen` (or stop); true if one was seen.
bool ThreadPool::spin_until_job(uint64_t seen) const {
  return poll(wait_, runs_, [&] {
    return generation_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed);
  });
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    const bool saw = may_spin() && spin_until_job(seen);
    std::unique_lock<std::mutex> lock(mu_);
    if (saw && !stop_ && !job_) {  // that job was finished before this thread got here
      seen = generation_.load(std::memory_order_relaxed);
      continue;
    }
    wake_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen); });
    if (stop_) return;
    seen = generation_;
    ++active_;
    lock.unlock();
    run_chunks();
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> relock(mu_);  // the caller checks active_ under mu_ before it sleeps
      done_.notify_one();
    }
  }
}

// The caller has run out of chunks: wait until no worker is inside run_chunks, then
// retire the job in the same critical section (a worker that takes mu_ later finds no job).
void ThreadPool::finish_job() {
  if (active_.load(std::memory_order_acquire) != 0 && may_spin())
    poll(wait_, runs_, [&] { return active_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return active_ == 0; });
  job_ = nullptr;
  busy_ = false;
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
      generation_.fetch_add(1, std::memory_order_release);
    }
  }
  if (inline_run) {
    fn(0, n);
    return;
  }
  wake_.notify_all();
  run_chunks();
  finish_job();
}

}  // namespace glassbox
