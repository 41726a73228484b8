#include "kernels/kernel_error.h"

#include <exception>
#include <mutex>

#include "core/thread_pool.h"

namespace glassbox::kernels {

void parallel_for_rethrow(ThreadPool& pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  std::mutex mu;
  std::exception_ptr first;
  pool.parallel_for(n, grain, [&](int64_t i0, int64_t i1) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (first) return;  // the call fails anyway: skip the remaining chunks
    }
    try {
      fn(i0, i1);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
    }
  });
  if (first) std::rethrow_exception(first);
}

}  // namespace glassbox::kernels
