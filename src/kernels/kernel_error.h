// A kernel that cannot run here (a library kernel, e.g. oneDNN's, refused this CPU or these
// sizes, or failed while running). Kernels return void, so they throw this — only inside the
// kernel layer: the runtime's executor catches it around each op's compute and returns an Error
// naming the node (runtime/executor.cpp). Kernels that run work on the ThreadPool catch it per
// chunk and rethrow it on the calling thread (dnnl_common::parallel_for_rethrow): an exception
// never unwinds through the pool and never crosses a public API.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

class KernelError : public std::runtime_error {
 public:
  KernelError(const std::string& what, std::string fix) : std::runtime_error(what), fix_(std::move(fix)) {}
  const std::string& fix() const { return fix_; }

 private:
  std::string fix_;
};

// pool.parallel_for(n, grain, fn) where fn may throw (a KernelError from a oneDNN call): a
// chunk's exception is kept (the first one) instead of unwinding through the pool, later
// chunks are skipped, and it is rethrown on the calling thread once the pool's job has ended.
void parallel_for_rethrow(ThreadPool& pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace glassbox::kernels
