#include "kernels/dnnl_common.h"

#include <dlfcn.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/thread_pool.h"
#include "kernels/cpu_features.h"

static_assert(DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP, "dnnl_common.cpp assumes oneDNN's OpenMP runtime; see docs/kernels.md");

namespace glassbox::kernels::dnnl_common {
namespace {

struct Cache {
  std::mutex mu;
  std::map<std::vector<int64_t>, Primitive> primitives;
  std::vector<dnnl::memory::desc> layouts;  // packed weight layouts, interned
  std::map<std::vector<int64_t>, int> layout_by_shape;  // (K, n, types) -> index into layouts
};

Cache& cache() {
  static Cache c;
  return c;
}

// Bound on cached primitives; dynamic shapes (sequence length) create new ones.
constexpr size_t kMaxCachedPrimitives = 2048;

// "bf16[128,768]": a descriptor's type and logical dims, for error messages.
std::string desc_text(const dnnl::memory::desc& d) {
  std::string s = dnnl_dt2str(static_cast<dnnl_data_type_t>(d.data_type()));
  s += "[";
  const auto dims = d.dims();
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// A matmul primitive's text for errors: "matmul bf16[128,768] x bf16[768,256] -> f32[128,256]".
std::string matmul_text(const dnnl::matmul::primitive_desc& pd) {
  return "matmul " + desc_text(pd.src_desc()) + " x " + desc_text(pd.weights_desc()) + " -> " + desc_text(pd.dst_desc());
}

}  // namespace

void throw_dnnl_error(const std::string& what, const dnnl::error& e) {
  std::string cpu;
  for (const auto& f : cpu_feature_names(cpu_features())) cpu += (cpu.empty() ? "" : " ") + f;
  throw KernelError("oneDNN " + what + " failed: " + e.what() + " (status " + std::to_string(static_cast<int>(e.status)) +
                        "); this CPU has: " + (cpu.empty() ? "no vector extension beyond SSE2" : cpu) +
                        "; oneDNN ISA 0x" + [] {
                          char b[16];
                          std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
                          return std::string(b);
                        }(),
                    "run with --precision fp32 (every x86-64 CPU has an fp32 kernel); if that fails too, report "
                    "this message with `glassbox explain` (CPU features and kernels)");
}

std::string matmul_implementation(const dnnl::memory::desc& a, const dnnl::memory::desc& w, const dnnl::memory::desc& c) {
  single_threaded_onednn();
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, w, c), base_attr(), engine());
    return pd.impl_info_str();
  } catch (const dnnl::error& e) {
    return std::string("none (oneDNN: ") + e.what() + ")";
  }
}

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
  Primitive p;
  try {
    dnnl::matmul::primitive_desc pd = make();
    p = Primitive{pd, dnnl::matmul(pd), pd.scratchpad_desc().get_size()};
  } catch (const dnnl::error& e) {
    std::string shape = "(key";
    for (int64_t v : key) shape += " " + std::to_string(v);
    throw_dnnl_error("matmul primitive creation " + shape + ")", e);
  }
  if (c.primitives.size() >= kMaxCachedPrimitives) c.primitives.clear();
  c.primitives.emplace(key, p);
  return p;
}

BlockLayout block_layout(int64_t K, int64_t n, dnnl::memory::data_type src, dnnl::memory::data_type weights,
                         dnnl::memory::data_type dst) {
  constexpr int64_t kLayoutRows = 128;
  using dims = dnnl::memory::dims;
  const std::vector<int64_t> shape{K, n, static_cast<int64_t>(src), static_cast<int64_t>(weights), static_cast<int64_t>(dst)};
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.layout_by_shape.find(shape);
    if (it != c.layout_by_shape.end()) return {it->second, c.layouts[static_cast<size_t>(it->second)]};
  }
  single_threaded_onednn();
  const dnnl::memory::desc a(dims{kLayoutRows, K}, src, dims{K, 1});
  const dnnl::memory::desc w(dims{K, n}, weights, dnnl::memory::format_tag::any);
  const dnnl::memory::desc d(dims{kLayoutRows, n}, dst, dims{n, 1});
  BlockLayout out;
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, w, d), base_attr(), engine());
    out.desc = pd.weights_desc();
  } catch (const dnnl::error& e) {
    throw_dnnl_error("matmul weights layout for " + desc_text(a) + " x " + desc_text(w) + " -> " + desc_text(d), e);
  }
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = std::find(c.layouts.begin(), c.layouts.end(), out.desc);
  out.id = static_cast<int>(it - c.layouts.begin());
  if (it == c.layouts.end()) c.layouts.push_back(out.desc);
  c.layout_by_shape.emplace(shape, out.id);
  return out;
}

std::shared_ptr<void> reorder_into_new(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to) {
  single_threaded_onednn();
  const size_t bytes = (to.get_size() + 63) / 64 * 64;
  std::shared_ptr<void> data(std::aligned_alloc(64, bytes), std::free);
  try {
    dnnl::memory in(from, engine(), const_cast<void*>(src));
    dnnl::memory out(to, engine(), data.get());
    dnnl::stream& s = thread_stream();
    dnnl::reorder(in, out).execute(s, in, out);
    s.wait();
  } catch (const dnnl::error& e) {
    throw_dnnl_error("reorder of weights " + desc_text(from) + " into the packed layout", e);
  }
  return data;
}

std::string bind_cached_block(const dnnl::memory::desc& desc, std::span<const std::byte> segment, int64_t size_in_meta,
                              const std::shared_ptr<const void>& owner, std::shared_ptr<void>* data) {
  if (static_cast<size_t>(size_in_meta) != desc.get_size() || segment.size() != desc.get_size())
    return "holds " + std::to_string(segment.size()) + " bytes, this oneDNN layout " + std::to_string(desc.get_size());
  if (reinterpret_cast<uintptr_t>(segment.data()) % 64 != 0) return "is not 64-byte aligned";
  // Read-only memory of the mapped file, alive with the owner: oneDNN only reads weights.
  *data = std::shared_ptr<void>(std::const_pointer_cast<void>(owner), const_cast<std::byte*>(segment.data()));
  return "";
}

std::string read_block_entry(std::istream& in, int64_t index, int64_t next, int64_t N, int64_t* n0, int64_t* n,
                             int64_t* size) {
  char c1 = 0, c2 = 0;
  *size = -1;
  in >> *n0 >> c1 >> *n >> c2 >> *size;
  if (!in || c1 != ':' || c2 != ':' || *n0 != next || *n <= 0 || *n0 + *n > N)
    return "block " + std::to_string(index) + " does not tile [0, N)";
  return "";
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute(const Primitive& p, std::unordered_map<int, dnnl::memory> args) {
  single_threaded_onednn();
  try {
    if (p.scratch)
      args.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(p.pd.scratchpad_desc(), engine(), thread_buffer<kScratch>(p.scratch))});
    dnnl::stream& s = thread_stream();
    p.prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error& e) {
    throw_dnnl_error(matmul_text(p.pd) + " execution", e);
  }
}

namespace {

struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

dnnl::memory unbound(const dnnl::memory::desc& d) { return dnnl::memory(d, engine(), DNNL_MEMORY_NONE); }

}  // namespace

BoundPrimitive& bound_primitive(const std::vector<int64_t>& key, const std::function<dnnl::matmul::primitive_desc()>& make) {
  thread_local std::unordered_map<std::vector<int64_t>, std::unique_ptr<BoundPrimitive>, KeyHash> front;
  auto it = front.find(key);
  if (it != front.end()) return *it->second;
  if (front.size() >= kMaxCachedPrimitives) front.clear();  // as the shared cache: dynamic shapes
  auto b = std::make_unique<BoundPrimitive>();
  b->p = get_primitive(key, make);
  const auto& pd = b->p.pd;
  try {
    b->args.emplace(DNNL_ARG_SRC, unbound(pd.src_desc()));
    b->args.emplace(DNNL_ARG_WEIGHTS, unbound(pd.weights_desc()));
    b->args.emplace(DNNL_ARG_DST, unbound(pd.dst_desc()));
    if (!pd.bias_desc().is_zero()) b->args.emplace(DNNL_ARG_BIAS, unbound(pd.bias_desc()));
    if (b->p.scratch) b->args.emplace(DNNL_ARG_SCRATCHPAD, unbound(pd.scratchpad_desc()));
  } catch (const dnnl::error& e) {
    throw_dnnl_error(matmul_text(pd) + " argument binding", e);
  }
  return *front.emplace(key, std::move(b)).first->second;
}

void execute_bound(BoundPrimitive& b, const void* src, const void* weights, void* dst, const void* bias) {
  single_threaded_onednn();
  try {
    b.args.at(DNNL_ARG_SRC).set_data_handle(const_cast<void*>(src));
    b.args.at(DNNL_ARG_WEIGHTS).set_data_handle(const_cast<void*>(weights));
    b.args.at(DNNL_ARG_DST).set_data_handle(dst);
    if (auto it = b.args.find(DNNL_ARG_BIAS); it != b.args.end()) it->second.set_data_handle(const_cast<void*>(bias));
    if (b.p.scratch) b.args.at(DNNL_ARG_SCRATCHPAD).set_data_handle(thread_buffer<kScratch>(b.p.scratch));
    dnnl::stream& s = thread_stream();
    b.p.prim.execute(s, b.args);
    s.wait();
  } catch (const dnnl::error& e) {
    throw_dnnl_error(matmul_text(b.p.pd) + " execution", e);
  }
}

int64_t column_block_width(int64_t N, ThreadPool* pool) {
  const int threads = pool ? pool->size() : 1;
  // First choice: the widest of 256/192/128/64 that gives every thread the same number of
  // blocks, at least 3 each. Without it the fused Q/K/V projection of BERT-base (N = 2304,
  // qkv_projection_fusion) gets 9 blocks of 256 on 2 threads: one thread computes a block more
  // (5 x 256 columns against 4.5 on average); 12 blocks of 192 are even. The usual widths
  // (768, 3072, 384, 1536 on 2 threads) come out as before.
  for (int64_t even : {256, 192, 128, 64}) {
    const int64_t blocks = (N + even - 1) / even;
    if (blocks >= 3 * threads && blocks % threads == 0) return even;
  }
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
  parallel_for_rethrow(*pool, tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) run(t);
  });
}

}  // namespace glassbox::kernels::dnnl_common
