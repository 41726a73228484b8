// gemm_u8s8_packed on oneDNN's int8 matmul (u8 src, s8 weights, s32 dst), with
// the same threading design as gemm_dnnl.cpp: primitives created and run with the
// calling thread's OpenMP count at 1, the product cut into (row block x column
// block) tiles that the ThreadPool's threads claim, primitives cached by shape,
// a user-managed scratchpad per thread. Zero points and the float scale are
// applied while each tile is copied out (see gemm_int8.h).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/thread_pool.h"
#include "kernels/gemm_int8.h"

namespace glassbox::kernels {

struct PackedGemmS8B {
  struct Block {
    int64_t n0 = 0, n = 0;  // columns [n0, n0 + n)
    int layout = -1;        // index into the interned layouts (fast path)
    dnnl::memory::desc desc;
    std::shared_ptr<void> data;  // fast path: 64-byte aligned, desc.get_size() bytes
  };
  int64_t K = 0, N = 0;
  bool fast = false;
  std::vector<Block> blocks;
  std::vector<int32_t> colsum;  // [N]: sum_k B[k, j]
  std::vector<int8_t> plain;    // reference path: B dense [K, N]
  int64_t bytes = 0;
};

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

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

template <int Tag>
void* thread_buffer(size_t bytes) {
  thread_local std::shared_ptr<void> buf;
  thread_local size_t size = 0;
  if (bytes > size) {
    size = (bytes + 4095) / 4096 * 4096;
    buf.reset(std::aligned_alloc(64, size), std::free);
  }
  return buf.get();
}

struct Entry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  size_t scratch = 0;
};

struct Cache {
  std::mutex mu;
  std::map<std::vector<int64_t>, Entry> primitives;
  std::vector<dnnl::memory::desc> layouts;
};

Cache& cache() {
  static Cache c;
  return c;
}

constexpr size_t kMaxCachedPrimitives = 2048;

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory::desc dense(int64_t rows, int64_t cols, dt type) {
  return dnnl::memory::desc(dims{rows, cols}, type, dims{cols, 1});
}

Entry get_primitive(int64_t m, int64_t K, const PackedGemmS8B::Block& blk) {
  const std::vector<int64_t> key{m, K, blk.n, blk.layout};
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.primitives.find(key);
  if (it != c.primitives.end()) return it->second;
  single_threaded_onednn();
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(dense(m, K, dt::u8), blk.desc, dense(m, blk.n, dt::s32)),
                                  base_attr(), engine());
  Entry e{pd, dnnl::matmul(pd), pd.scratchpad_desc().get_size()};
  if (c.primitives.size() >= kMaxCachedPrimitives) c.primitives.clear();
  c.primitives.emplace(key, e);
  return e;
}

// The s8 weights layout oneDNN picks for a [K, n] block at a typical row count, interned
// (same desc, same id) and memoized by (K, n).
void set_block_layout(int64_t K, PackedGemmS8B::Block& blk) {
  constexpr int64_t kLayoutRows = 128;
  static std::map<std::pair<int64_t, int64_t>, int> by_shape;
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = by_shape.find({K, blk.n});
    if (it != by_shape.end()) {
      blk.layout = it->second;
      blk.desc = c.layouts[static_cast<size_t>(it->second)];
      return;
    }
  }
  single_threaded_onednn();
  auto w_any = dnnl::memory::desc(dims{K, blk.n}, dt::s8, dnnl::memory::format_tag::any);
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(dense(kLayoutRows, K, dt::u8), w_any, dense(kLayoutRows, blk.n, dt::s32)), base_attr(), engine());
  blk.desc = pd.weights_desc();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = std::find(c.layouts.begin(), c.layouts.end(), blk.desc);
  blk.layout = static_cast<int>(it - c.layouts.begin());
  if (it == c.layouts.end()) c.layouts.push_back(blk.desc);
  by_shape.emplace(std::make_pair(K, blk.n), blk.layout);
}

// acc (m x n, dense) -> C with the zero-point terms, then s32 or scaled f32.
void finish_tile(const QGemmArgs& a, const PackedGemmS8B& B, const int32_t* rowsum, int64_t m0, int64_t m,
                 int64_t n0, int64_t n, const int32_t* acc) {
  const uint32_t K = static_cast<uint32_t>(B.K);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t r = m0 + i;
    const uint32_t za = a.a_zp ? static_cast<uint32_t>(a.a_zp[a.a_zp_per_row ? r : 0]) : 0u;
    const uint32_t rs = rowsum ? static_cast<uint32_t>(rowsum[r]) : 0u;
    const int32_t* in = acc + i * n;
    const int32_t* cs = B.colsum.data() + n0;
    const int32_t* zb = a.b_zp ? a.b_zp + n0 : nullptr;
    auto value = [&](int64_t j) {
      uint32_t v = static_cast<uint32_t>(in[j]) - za * static_cast<uint32_t>(cs[j]);
      if (zb) v = v - static_cast<uint32_t>(zb[j]) * rs + K * za * static_cast<uint32_t>(zb[j]);
      return static_cast<int32_t>(v);
    };
    if (a.C_s32) {
      int32_t* out = a.C_s32 + r * a.ldc + n0;
      for (int64_t j = 0; j < n; ++j) out[j] = value(j);
    } else {
      float* out = a.C_f32 + r * a.ldc + n0;
      const float* s = a.scale + n0;
      if (a.bias) {
        const float* b = a.bias + n0;
        for (int64_t j = 0; j < n; ++j) {
          const float prod = static_cast<float>(value(j)) * s[j];  // Cast, Mul, then Add: two roundings
          out[j] = prod + b[j];
        }
      } else {
        for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(value(j)) * s[j];
      }
    }
  }
}

}  // namespace

bool gemm_u8s8_fast_available() {
  static const bool ok = __builtin_cpu_supports("avx512vnni") != 0;
  return ok;
}

std::shared_ptr<const PackedGemmS8B> pack_gemm_b_s8(int64_t K, int64_t N, int64_t ldb, const int8_t* B,
                                                    ThreadPool* pool) {
  auto p = std::make_shared<PackedGemmS8B>();
  p->K = K;
  p->N = N;
  p->fast = gemm_u8s8_fast_available();
  p->colsum.assign(static_cast<size_t>(N), 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) p->colsum[j] += B[k * ldb + j];
  const int threads = pool ? pool->size() : 1;
  int64_t nb = 256;
  while (nb > 64 && (N + nb - 1) / nb < 3 * threads) nb /= 2;
  for (int64_t n0 = 0; n0 < N; n0 += nb) p->blocks.push_back({n0, std::min(nb, N - n0), -1, {}, {}});
  if (!p->fast) {
    p->plain.resize(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k) std::memcpy(p->plain.data() + k * N, B + k * ldb, static_cast<size_t>(N));
    p->bytes = K * N;
    return p;
  }
  for (auto& blk : p->blocks) set_block_layout(K, blk);
  auto reorder_block = [&](int64_t i0, int64_t i1) {
    single_threaded_onednn();
    for (int64_t i = i0; i < i1; ++i) {
      auto& blk = p->blocks[static_cast<size_t>(i)];
      const size_t bytes = (blk.desc.get_size() + 63) / 64 * 64;
      blk.data.reset(std::aligned_alloc(64, bytes), std::free);
      dnnl::memory from(dnnl::memory::desc(dims{K, blk.n}, dt::s8, dims{ldb, 1}), engine(),
                        const_cast<int8_t*>(B + blk.n0));
      dnnl::memory to(blk.desc, engine(), blk.data.get());
      dnnl::stream& s = thread_stream();
      dnnl::reorder(from, to).execute(s, from, to);
      s.wait();
    }
  };
  if (pool) pool->parallel_for(static_cast<int64_t>(p->blocks.size()), 1, reorder_block);
  else reorder_block(0, static_cast<int64_t>(p->blocks.size()));
  for (const auto& blk : p->blocks) p->bytes += static_cast<int64_t>(blk.desc.get_size());
  return p;
}

int64_t packed_gemm_b_s8_bytes(const PackedGemmS8B& b) { return b.bytes + b.N * 4; }

// Meta text: "gemm_b_s8 v1 K N fast blocks" then " n0:n:bytes" per block. Segments: the
// column sums, then the plain weights (reference path) or one per block (fast path).
PackedBytes packed_gemm_b_s8_to_bytes(std::shared_ptr<const PackedGemmS8B> b) {
  PackedBytes out;
  out.meta = "gemm_b_s8 v1 " + std::to_string(b->K) + " " + std::to_string(b->N) + " " + (b->fast ? "1" : "0") + " " +
             std::to_string(b->blocks.size());
  out.segments.emplace_back(reinterpret_cast<const std::byte*>(b->colsum.data()), b->colsum.size() * sizeof(int32_t));
  if (!b->fast) out.segments.emplace_back(reinterpret_cast<const std::byte*>(b->plain.data()), b->plain.size());
  for (const auto& blk : b->blocks) {
    const size_t bytes = b->fast ? blk.desc.get_size() : 0;
    out.meta += " " + std::to_string(blk.n0) + ":" + std::to_string(blk.n) + ":" + std::to_string(bytes);
    if (b->fast) out.segments.emplace_back(static_cast<const std::byte*>(blk.data.get()), bytes);
  }
  out.owner = std::move(b);
  return out;
}

std::shared_ptr<const PackedGemmS8B> packed_gemm_b_s8_from_bytes(int64_t K, int64_t N, const PackedBytes& bytes,
                                                                  std::string* why) {
  auto refuse = [&](const std::string& w) -> std::shared_ptr<const PackedGemmS8B> {
    *why = w;
    return nullptr;
  };
  std::istringstream in(bytes.meta);
  std::string kind, version;
  int64_t k = 0, n = 0, fast = -1, count = -1;
  in >> kind >> version >> k >> n >> fast >> count;
  if (!in || kind != "gemm_b_s8" || version != "v1") return refuse("not a gemm_b_s8 v1 packing");
  if (k != K || n != N) return refuse("packed for [" + std::to_string(k) + ", " + std::to_string(n) + "]");
  if ((fast == 1) != gemm_u8s8_fast_available()) return refuse("packed for the other int8 path (VNNI differs)");
  const size_t expected_segments = static_cast<size_t>(count) + (fast ? 1 : 2);
  if (count < 0 || bytes.segments.size() != expected_segments) return refuse("block count differs from its segments");
  auto p = std::make_shared<PackedGemmS8B>();
  p->K = K;
  p->N = N;
  p->fast = fast == 1;
  const auto& sums = bytes.segments[0];
  if (sums.size() != static_cast<size_t>(N) * sizeof(int32_t)) return refuse("column sums have the wrong size");
  p->colsum.resize(static_cast<size_t>(N));
  std::memcpy(p->colsum.data(), sums.data(), sums.size());
  if (!p->fast) {
    const auto& plain = bytes.segments[1];
    if (plain.size() != static_cast<size_t>(K * N)) return refuse("plain weights have the wrong size");
    p->plain.assign(reinterpret_cast<const int8_t*>(plain.data()), reinterpret_cast<const int8_t*>(plain.data()) + plain.size());
    p->bytes = K * N;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < count; ++i) {
    PackedGemmS8B::Block blk;
    int64_t size = -1;
    char c1 = 0, c2 = 0;
    in >> blk.n0 >> c1 >> blk.n >> c2 >> size;
    if (!in || c1 != ':' || c2 != ':' || blk.n0 != next || blk.n <= 0 || blk.n0 + blk.n > N)
      return refuse("block " + std::to_string(i) + " does not tile [0, N)");
    next = blk.n0 + blk.n;
    if (p->fast) {
      set_block_layout(K, blk);
      const auto& seg = bytes.segments[static_cast<size_t>(i) + 1];
      if (static_cast<size_t>(size) != blk.desc.get_size() || seg.size() != blk.desc.get_size())
        return refuse("block " + std::to_string(i) + " holds " + std::to_string(seg.size()) + " bytes, this oneDNN layout " +
                      std::to_string(blk.desc.get_size()));
      if (reinterpret_cast<uintptr_t>(seg.data()) % 64 != 0) return refuse("block " + std::to_string(i) + " is not aligned");
      blk.data = std::shared_ptr<void>(std::const_pointer_cast<void>(bytes.owner), const_cast<std::byte*>(seg.data()));
      p->bytes += static_cast<int64_t>(seg.size());
    }
    p->blocks.push_back(std::move(blk));
  }
  if (next != N) return refuse("blocks cover " + std::to_string(next) + " of " + std::to_string(N) + " columns");
  return p;
}

void gemm_u8s8_packed(const QGemmArgs& a, const PackedGemmS8B& B, ThreadPool* pool) {
  const int64_t M = a.M, K = B.K;
  if (M <= 0 || B.N <= 0) return;
  if (a.lda != K) {  // tiles need dense rows
    std::vector<uint8_t> dense_a(static_cast<size_t>(M * K));
    for (int64_t i = 0; i < M; ++i) std::memcpy(dense_a.data() + i * K, a.A + i * a.lda, static_cast<size_t>(K));
    QGemmArgs d = a;
    d.A = dense_a.data();
    d.lda = K;
    gemm_u8s8_packed(d, B, pool);
    return;
  }
  std::vector<int32_t> rowsum;
  if (a.b_zp && std::any_of(a.b_zp, a.b_zp + B.N, [](int32_t z) { return z != 0; })) {
    rowsum.assign(static_cast<size_t>(M), 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) rowsum[i] += a.A[i * K + k];
  }
  constexpr int64_t kRowBlock = 256;
  const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = static_cast<int64_t>(B.blocks.size());
  auto tile = [&](int64_t t) {
    const int64_t rb = t / col_blocks;
    const auto& blk = B.blocks[static_cast<size_t>(t % col_blocks)];
    const int64_t m0 = rb * kRowBlock, m = std::min(kRowBlock, M - m0);
    auto* acc = static_cast<int32_t*>(thread_buffer<1>(static_cast<size_t>(m * blk.n) * sizeof(int32_t)));
    if (B.fast) {
      const Entry e = get_primitive(m, K, blk);
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, dnnl::memory(e.pd.src_desc(), engine(), const_cast<uint8_t*>(a.A + m0 * K))},
          {DNNL_ARG_WEIGHTS, dnnl::memory(e.pd.weights_desc(), engine(), blk.data.get())},
          {DNNL_ARG_DST, dnnl::memory(e.pd.dst_desc(), engine(), acc)}};
      single_threaded_onednn();
      if (e.scratch)
        args.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(e.pd.scratchpad_desc(), engine(), thread_buffer<0>(e.scratch))});
      dnnl::stream& s = thread_stream();
      e.prim.execute(s, args);
      s.wait();
    } else {
      gemm_integer_reference<uint8_t, int8_t>(m, blk.n, K, a.A + m0 * K, K, nullptr, false, B.plain.data() + blk.n0,
                                              B.N, nullptr, false, acc, blk.n);
    }
    finish_tile(a, B, rowsum.empty() ? nullptr : rowsum.data(), m0, m, blk.n0, blk.n, acc);
  };
  const int64_t tiles = row_blocks * col_blocks;
  if (!pool || pool->size() == 1 || tiles == 1) {
    for (int64_t t = 0; t < tiles; ++t) tile(t);
    return;
  }
  pool->parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) tile(t);
  });
}

void apply_qgemm_scale(int64_t M, int64_t N, const int32_t* acc, int64_t ld_acc, const float* scale, const float* bias,
                       float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const float prod = static_cast<float>(acc[i * ld_acc + j]) * scale[j];
      C[i * ldc + j] = bias ? prod + bias[j] : prod;
    }
}

}  // namespace glassbox::kernels
