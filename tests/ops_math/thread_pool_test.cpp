// ThreadPool under each waiting mode (SessionOptions::pool_wait): every index exactly
// once, nested calls inline, several callers at once, runs in and out of a RunScope,
// destruction while workers may be spinning. And the spin gate's /proc/loadavg parser.
// No timing is asserted: the modes differ in speed only.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/spin_gate.h"
#include "core/thread_pool.h"

namespace glassbox {
namespace {

using Wait = ThreadPool::Wait;

std::string wait_name(Wait w) { return w == Wait::kSleep ? "sleep" : w == Wait::kSpin ? "spin" : "auto"; }

class ThreadPoolModes : public ::testing::TestWithParam<Wait> {};

void every_index_once(ThreadPool& pool) {
  for (int64_t n : {1, 2, 7, 64, 1001}) {
    for (int64_t grain : {1, 3, 100}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
        EXPECT_LE(0, b);
        EXPECT_LT(b, e);
        EXPECT_LE(e, n);
        pool.parallel_for(3, 1, [](int64_t, int64_t) {});  // nested: inline, must not deadlock
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " i " << i;
    }
  }
}

TEST_P(ThreadPoolModes, EveryIndexExactlyOnceAndNestedCallsRunInline) {
  for (int threads : {1, 2, 5}) {
    ThreadPool pool(threads, GetParam());
    EXPECT_EQ(pool.wait(), GetParam());
    every_index_once(pool);  // outside a run: no mode spins
    ThreadPool::RunScope run(pool);
    every_index_once(pool);  // inside a run: kSpin / kAuto may spin
  }
}

// Many short jobs back to back inside a run (the pattern spinning is for), with the
// caller doing serial work between some of them; each job's sum must be exact.
TEST_P(ThreadPoolModes, BackToBackJobsInARun) {
  ThreadPool pool(3, GetParam());
  ThreadPool::RunScope run(pool);
  for (int job = 0; job < 2000; ++job) {
    const int64_t n = 1 + job % 97;
    std::atomic<int64_t> sum{0};
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    ASSERT_EQ(sum.load(), n * (n - 1) / 2) << "job " << job;
    if (job % 100 == 0) std::this_thread::yield();
  }
}

// Several threads share one pool (a server's requests on one session): one gets the
// workers, the others run inline; every result is still exact.
TEST_P(ThreadPoolModes, ConcurrentCallersAndRunScopes) {
  ThreadPool pool(2, GetParam());
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int job = 0; job < 300; ++job) {
        ThreadPool::RunScope run(pool);
        const int64_t n = 10 + (job + t) % 50;
        std::atomic<int64_t> sum{0};
        pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) sum += i;
        });
        if (sum.load() != n * (n - 1) / 2) ++wrong;
      }
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The pool is destroyed right after a run's last job (its workers may still be polling
// for the next one): the destructor must stop and join them.
TEST_P(ThreadPoolModes, DestroyedRightAfterARun) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(3, GetParam());
    std::atomic<int> ran{0};
    {
      ThreadPool::RunScope run(pool);
      pool.parallel_for(12, 1, [&](int64_t b, int64_t e) { ran += static_cast<int>(e - b); });
    }
    EXPECT_EQ(ran.load(), 12);
  }
}

INSTANTIATE_TEST_SUITE_P(Wait, ThreadPoolModes, ::testing::Values(Wait::kSleep, Wait::kSpin, Wait::kAuto),
                         [](const ::testing::TestParamInfo<Wait>& i) { return wait_name(i.param); });

TEST(SpinGate, ParsesRunnableThreadsOfProcLoadavg) {
  EXPECT_EQ(spin_gate::parse_runnable("0.52 0.58 0.59 2/345 12345\n"), 2);
  EXPECT_EQ(spin_gate::parse_runnable("10.00 9.50 8.00 13/1024 99"), 13);
  EXPECT_EQ(spin_gate::parse_runnable(""), -1);
  EXPECT_EQ(spin_gate::parse_runnable("garbage"), -1);
  EXPECT_EQ(spin_gate::parse_runnable("1.0 1.0 1.0 /345 1"), -1);
}

TEST(SpinGate, ParsesTaskStateOfProcTaskStat) {
  EXPECT_EQ(spin_gate::parse_task_running("4242 (glassbox) R 1 4242 4242 0 -1 4194304 300 0"), 1);
  EXPECT_EQ(spin_gate::parse_task_running("4243 (glassbox) S 1 4242 4242 0 -1 4194368 12 0"), 0);
  EXPECT_EQ(spin_gate::parse_task_running("4244 (kworker/0:1-events) I 2 0 0 0"), 0);
  // comm may hold spaces and ')': the state is the field after the last ')'.
  EXPECT_EQ(spin_gate::parse_task_running("77 (a) S (b)) R 1 77 77"), 1);
  EXPECT_EQ(spin_gate::parse_task_running("78 (x y) D 1"), 0);
  EXPECT_EQ(spin_gate::parse_task_running(""), -1);
  EXPECT_EQ(spin_gate::parse_task_running("79 (no state)"), -1);
  EXPECT_EQ(spin_gate::parse_task_running("80 no parenthesis R"), -1);
}

TEST(SpinGate, CoreFreeCountsOnlyOtherProcessesRunnableThreads) {
  // 2 CPUs, a 2-thread run: /proc/loadavg's count includes our own running threads.
  EXPECT_TRUE(spin_gate::core_free(2, 2, 2, 2));   // only ours run: the old gate's case, open
  EXPECT_TRUE(spin_gate::core_free(1, 1, 2, 2));   // the worker sleeps: it would still get its core
  EXPECT_FALSE(spin_gate::core_free(3, 2, 2, 2));  // one other runnable thread: someone would wait
  EXPECT_FALSE(spin_gate::core_free(2, 1, 2, 2));  // the other is not ours: our sleeping worker would wait
  EXPECT_FALSE(spin_gate::core_free(4, 2, 2, 2));  // a busy loop per core
  EXPECT_TRUE(spin_gate::core_free(3, 2, 2, 4));   // 4 CPUs: room for one more
  EXPECT_FALSE(spin_gate::core_free(3, 3, 2, 2));  // 3 threads of ours running (a server thread too)
  EXPECT_FALSE(spin_gate::core_free(1, 0, 4, 2));  // a 4-thread pool on 2 CPUs never fits
  EXPECT_TRUE(spin_gate::core_free(1, 2, 2, 2));   // reads not atomic (a thread woke in between): others >= 0
  EXPECT_FALSE(spin_gate::core_free(-1, 1, 2, 2));  // /proc/loadavg unreadable
  EXPECT_FALSE(spin_gate::core_free(2, -1, 2, 2));  // /proc/self/task unreadable
}

TEST(SpinGate, AnswersAndBacksOffAfterPreemption) {
  (void)spin_gate::allowed();  // reads /proc/loadavg (false if it cannot): must not crash
  spin_gate::preempted();
  EXPECT_FALSE(spin_gate::allowed());  // within kBackoff of a preemption: no spinning
}

}  // namespace
}  // namespace glassbox
