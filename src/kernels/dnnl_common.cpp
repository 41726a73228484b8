#include "kernels/dnnl_common.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/thread_pool.h"

static_assert(DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP, "dnnl_common.cpp assumes oneDNN's OpenMP runtime; see docs/kernels.md");

namespace glassbox::kernels::dnnl_common {
namespace {

struct Cache {
  std::mutex mu;
  std::map<std::vector<int64_t>, Primitive> primitives;
  std::vector<dnnl::memory::desc> layouts;  // packed weight layouts, interned
};

Cache& cache() {
  static Cache c;
  return c;
}

// Bound on cached primitives; dynamic shapes (sequence length) create new ones.
constexpr size_t kMaxCachedPrimitives = 2048;

}  // namespace

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

void single_threaded_onednn() {
  using Fn = void (*)(int);
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (fn) fn(1);
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

Primitive get_primitive(const std::vector<int64_t>& key, const std::function<dnnl::matmul::primitive_desc()>& make) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.primitives.find(key);
  if (it != c.primitives.end()) return it->second;
  single_threaded_onednn();
  dnnl::matmul::primitive_desc pd = make();
  Primitive p{pd, dnnl::matmul(pd), pd.scratchpad_desc().get_size()};
  if (c.primitives.size() >= kMaxCachedPrimitives) c.primitives.clear();
  c.primitives.emplace(key, p);
  return p;
}

int intern_layout(const dnnl::memory::desc& desc) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = std::find(c.layouts.begin(), c.layouts.end(), desc);
  const int id = static_cast<int>(it - c.layouts.begin());
  if (it == c.layouts.end()) c.layouts.push_back(desc);
  return id;
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args) {
  single_threaded_onednn();
  if (p.scratch)
    args.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(p.pd.scratchpad_desc(), engine(), thread_buffer<kScratch>(p.scratch))});
  dnnl::stream& s = thread_stream();
  p.prim.execute(s, args);
  s.wait();
}

int64_t column_block_width(int64_t N, ThreadPool* pool) {
  const int threads = pool ? pool->size() : 1;
  int64_t nb = 256;
  while (nb > 64 && (N + nb - 1) / nb < 3 * threads) nb /= 2;
  return nb;
}

void run_tiles(int64_t M, int64_t column_blocks, ThreadPool* pool,
               const std::function<void(int64_t m0, int64_t m, int64_t block)>& tile) {
  const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
  const int64_t tiles = row_blocks * column_blocks;
  auto run = [&](int64_t t) {
    const int64_t m0 = t / column_blocks * kRowBlock;
    tile(m0, std::min(kRowBlock, M - m0), t % column_blocks);
  };
  if (!pool || pool->size() == 1 || tiles == 1) {
    for (int64_t t = 0; t < tiles; ++t) run(t);
    return;
  }
  pool->parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) run(t);
  });
}

}  // namespace glassbox::kernels::dnnl_common
