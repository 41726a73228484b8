// gemm_f32 / gemm_f32_packed on oneDNN's matmul primitive.
//
// Threads: Debian's libdnnl 2.6 is built with the OpenMP CPU runtime
// (DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP). Letting it thread meant two sets of
// threads (OpenMP's team and our ThreadPool) fighting for the cores, and
// OpenMP's spinning workers made 2 threads 3-10x slower than 1 on a loaded
// machine. So every primitive here is created and executed with the calling
// thread's OpenMP thread count set to 1 (omp_set_num_threads, looked up at run
// time from the libgomp libdnnl already loads; a per-thread setting), and the
// product is cut into tiles (batch ranges, row blocks, column blocks) that our
// pool's threads claim. No OpenMP team is ever started by GEMM.
//
// Primitive cache, per-thread buffers and the tile scheduler: kernels/dnnl_common.h
// (shared with the u8 x s8 products of gemm_int8_dnnl.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/thread_pool.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/dnnl_common.h"
#include "kernels/gemm.h"
#include "kernels/gemm_int8.h"

namespace glassbox::kernels {

struct PackedGemmB {
  struct Block {
    int64_t n0 = 0, n = 0;  // columns [n0, n0 + n)
    int layout = -1;        // index into the layout table (same desc -> same id)
    dnnl::memory::desc desc;
    std::shared_ptr<void> data;  // 64-byte aligned, desc.get_size() bytes
  };
  int64_t K = 0, N = 0;
  PackedPrecision precision = PackedPrecision::kF32;
  std::vector<Block> blocks;
  std::shared_ptr<const PackedGemmS8B> s8;  // kS8Dynamic: the quantized weights (no blocks here)
  int64_t bytes = 0;
};

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

using namespace dnnl_common;

dnnl::memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool trans, int64_t ld, int64_t bstride) {
  // Logical [batch, rows, cols]; stored row-major with leading dim ld, or transposed.
  dims shape{batch, rows, cols};
  dims strides = trans ? dims{bstride, 1, ld} : dims{bstride, ld, 1};
  if (batch == 1) strides[0] = rows * cols;  // unused stride; keep it valid
  return dnnl::memory::desc(shape, dt::f32, strides);
}

dnnl::memory::desc matrix2d(int64_t rows, int64_t cols, int64_t ld, dt type = dt::f32) {
  return dnnl::memory::desc(dims{rows, cols}, type, dims{ld, 1});
}

// Activation (source) and weight type of packed products: bf16 weights take bf16 sources.
dt packed_type(PackedPrecision p) { return p == PackedPrecision::kBf16 ? dt::bf16 : dt::f32; }

using Key = std::vector<int64_t>;

// The layout of a [K, n] block of packed weights (f32 or bf16 activations and weights, f32
// product), shared and memoized (dnnl_common::block_layout).
void set_block_layout(int64_t K, dt type, PackedGemmB::Block& blk) {
  const BlockLayout l = block_layout(K, blk.n, type, type, dt::f32);
  blk.layout = l.id;
  blk.desc = l.desc;
}

// One product on the calling thread (the unit of parallel work).
void gemm_tile(const GemmDesc& d, const float* A, const float* B, float* C) {
  const Key key{d.batch, d.M, d.N, d.K, d.trans_a, d.trans_b, d.lda, d.ldb, d.ldc, d.stride_a, d.stride_b, d.stride_c};
  const Primitive e = get_primitive(key, [&] {
    const bool shared_b = d.stride_b == 0 && d.batch > 1;
    auto a = matrix_desc(d.batch, d.M, d.K, d.trans_a, d.lda, d.stride_a);
    auto b = matrix_desc(shared_b ? 1 : d.batch, d.K, d.N, d.trans_b, d.ldb, shared_b ? d.K * d.N : d.stride_b);
    auto c = matrix_desc(d.batch, d.M, d.N, false, d.ldc, d.stride_c);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), base_attr(), engine());
  });
  std::unordered_map<int, dnnl::memory> args;
  try {
    args = {{DNNL_ARG_SRC, dnnl::memory(e.pd.src_desc(), engine(), const_cast<float*>(A))},
            {DNNL_ARG_WEIGHTS, dnnl::memory(e.pd.weights_desc(), engine(), const_cast<float*>(B))},
            {DNNL_ARG_DST, dnnl::memory(e.pd.dst_desc(), engine(), C)}};
  } catch (const dnnl::error& err) {
    throw_dnnl_error("matmul f32 argument binding", err);
  }
  execute(e, std::move(args));
}

// Below this many multiply-adds a product runs as one tile: splitting costs more than it saves.
constexpr double kMinParallelMacs = 1 << 20;

}  // namespace

void gemm_f32(const GemmDesc& d, const float* A, const float* B, float* C, ThreadPool* pool) {
  if (d.batch <= 0 || d.M <= 0 || d.N <= 0) return;
  if (d.K == 0) {  // empty sum
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < d.M; ++i)
        for (int64_t j = 0; j < d.N; ++j) C[b * d.stride_c + i * d.ldc + j] = 0.f;
    return;
  }
  const double macs = static_cast<double>(d.batch) * d.M * d.N * d.K;
  if (!pool || pool->size() == 1 || macs < kMinParallelMacs) {
    gemm_tile(d, A, B, C);
    return;
  }
  if (d.batch >= 2) {  // batch ranges (attention heads)
    parallel_for_rethrow(*pool, d.batch, 1, [&](int64_t b0, int64_t b1) {
      GemmDesc t = d;
      t.batch = b1 - b0;
      gemm_tile(t, A + b0 * d.stride_a, B + b0 * d.stride_b, C + b0 * d.stride_c);
    });
    return;
  }
  if (d.N >= 128) {  // column blocks of 64
    const int64_t blocks = (d.N + 63) / 64;
    parallel_for_rethrow(*pool, blocks, 1, [&](int64_t j0, int64_t j1) {
      GemmDesc t = d;
      const int64_t n0 = j0 * 64, n1 = std::min(d.N, j1 * 64);
      t.N = n1 - n0;
      gemm_tile(t, A, B + (d.trans_b ? n0 * d.ldb : n0), C + n0);
    });
    return;
  }
  const int64_t blocks = (d.M + 15) / 16;  // row blocks of 16
  parallel_for_rethrow(*pool, blocks, 1, [&](int64_t i0, int64_t i1) {
    GemmDesc t = d;
    const int64_t m0 = i0 * 16, m1 = std::min(d.M, i1 * 16);
    t.M = m1 - m0;
    gemm_tile(t, A + (d.trans_a ? m0 : m0 * d.lda), B, C + m0 * d.ldc);
  });
}

std::shared_ptr<const PackedGemmB> pack_gemm_b(int64_t K, int64_t N, bool trans_b, int64_t ldb, const void* B,
                                               PackedPrecision precision, ThreadPool* pool) {
  const bool misaligned = reinterpret_cast<uintptr_t>(B) % alignof(float) != 0;
  auto p = std::make_shared<PackedGemmB>();
  p->K = K;
  p->N = N;
  p->precision = precision;
  if (precision == PackedPrecision::kS8Dynamic && K > kS8DynamicMaxK) p->precision = precision = PackedPrecision::kF32;
  if (precision == PackedPrecision::kS8Dynamic) {  // int8-dynamic: quantized and packed by gemm_int8_dnnl.cpp
    p->s8 = pack_gemm_b_s8_from_f32(K, N, trans_b, ldb, B, pool);
    p->bytes = packed_gemm_b_s8_bytes(*p->s8);
    return p;
  }
  const dt type = packed_type(precision);
  const int64_t nb = column_block_width(N, pool);
  for (int64_t n0 = 0; n0 < N; n0 += nb) p->blocks.push_back({n0, std::min(nb, N - n0), -1, {}, {}});
  for (auto& blk : p->blocks) set_block_layout(K, type, blk);
  auto reorder_block = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      auto& blk = p->blocks[static_cast<size_t>(i)];
      // Offset of the block's first element, in floats; rows of the block: K rows of blk.n
      // (B is [K, N]) or blk.n rows of K (trans_b: B is [N, K]), ldb floats apart.
      const int64_t first = trans_b ? blk.n0 * ldb : blk.n0;
      const int64_t rows = trans_b ? blk.n : K, row_len = trans_b ? K : blk.n;
      int64_t ld = ldb;
      const float* origin = nullptr;
      std::vector<float> staged;
      if (misaligned) {  // bytes of a mapped file: copy the block's rows (memcpy) into aligned storage
        staged.resize(static_cast<size_t>(rows * row_len));
        const char* base = static_cast<const char*>(B) + first * static_cast<int64_t>(sizeof(float));
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(staged.data() + r * row_len, base + r * ldb * static_cast<int64_t>(sizeof(float)),
                      static_cast<size_t>(row_len) * sizeof(float));
        origin = staged.data();
        ld = row_len;
      } else {
        origin = static_cast<const float*>(B) + first;
      }
      dnnl::memory::desc src = trans_b ? dnnl::memory::desc(dims{K, blk.n}, dt::f32, dims{1, ld})
                                       : dnnl::memory::desc(dims{K, blk.n}, dt::f32, dims{ld, 1});
      blk.data = reorder_into_new(src, origin, blk.desc);
    }
  };
  if (pool) parallel_for_rethrow(*pool, static_cast<int64_t>(p->blocks.size()), 1, reorder_block);
  else reorder_block(0, static_cast<int64_t>(p->blocks.size()));
  for (const auto& blk : p->blocks) p->bytes += static_cast<int64_t>(blk.desc.get_size());
  return p;
}

int64_t packed_gemm_b_bytes(const PackedGemmB& b) { return b.bytes; }
PackedPrecision packed_gemm_b_precision(const PackedGemmB& b) { return b.precision; }

// Meta text: "gemm_b v1 K N precision blocks" then " n0:n:bytes" per block; int8-dynamic:
// "gemm_b v1 K N precision s8 " then the s8 packing's own text and segments.
PackedBytes packed_gemm_b_to_bytes(std::shared_ptr<const PackedGemmB> b) {
  const std::string head = "gemm_b v1 " + std::to_string(b->K) + " " + std::to_string(b->N) + " " +
                           std::to_string(static_cast<int>(b->precision)) + " ";
  if (b->s8) {
    PackedBytes out = packed_gemm_b_s8_to_bytes(b->s8);
    out.meta = head + "s8 " + out.meta;
    out.owner = std::move(b);
    return out;
  }
  PackedBytes out;
  out.meta = head + std::to_string(b->blocks.size());
  for (const auto& blk : b->blocks) {
    const size_t bytes = blk.desc.get_size();
    out.meta += " " + std::to_string(blk.n0) + ":" + std::to_string(blk.n) + ":" + std::to_string(bytes);
    out.segments.emplace_back(static_cast<const std::byte*>(blk.data.get()), bytes);
  }
  out.owner = std::move(b);
  return out;
}

std::shared_ptr<const PackedGemmB> packed_gemm_b_from_bytes(int64_t K, int64_t N, PackedPrecision precision,
                                                            const PackedBytes& bytes, std::string* why) {
  auto refuse = [&](const std::string& w) -> std::shared_ptr<const PackedGemmB> {
    *why = w;
    return nullptr;
  };
  // As pack_gemm_b: int8-dynamic keeps float32 weights where K is too long for exact int32 sums.
  if (precision == PackedPrecision::kS8Dynamic && K > kS8DynamicMaxK) precision = PackedPrecision::kF32;
  std::istringstream in(bytes.meta);
  std::string kind, version, blocks;
  int64_t k = 0, n = 0, prec = -1, count = -1;
  in >> kind >> version >> k >> n >> prec >> blocks;
  if (!in || kind != "gemm_b" || version != "v1") return refuse("not a gemm_b v1 packing: '" + bytes.meta.substr(0, 40) + "'");
  if (k != K || n != N || prec != static_cast<int>(precision))
    return refuse("packed for [" + std::to_string(k) + ", " + std::to_string(n) + "] precision " + std::to_string(prec));
  if ((blocks == "s8") != (precision == PackedPrecision::kS8Dynamic)) return refuse("packing kind differs from its precision");
  if (blocks == "s8") {
    std::string rest;
    std::getline(in >> std::ws, rest);
    auto s8 = packed_gemm_b_s8_from_bytes(K, N, PackedBytes{rest, bytes.segments, bytes.owner}, why);
    if (!s8) return nullptr;
    auto p = std::make_shared<PackedGemmB>();
    p->K = K;
    p->N = N;
    p->precision = precision;
    p->bytes = packed_gemm_b_s8_bytes(*s8);
    p->s8 = std::move(s8);
    return p;
  }
  try {
    count = std::stoll(blocks);
  } catch (const std::exception&) {
    return refuse("block count '" + blocks.substr(0, 20) + "' is not a number");
  }
  if (count < 0 || static_cast<size_t>(count) != bytes.segments.size()) return refuse("block count differs from its segments");
  auto p = std::make_shared<PackedGemmB>();
  p->K = K;
  p->N = N;
  p->precision = precision;
  const dt type = packed_type(precision);
  int64_t next = 0;
  for (int64_t i = 0; i < count; ++i) {
    PackedGemmB::Block blk;
    int64_t size = -1;
    const std::string gap = read_block_entry(in, i, next, N, &blk.n0, &blk.n, &size);
    if (!gap.empty()) return refuse(gap);
    next = blk.n0 + blk.n;
    set_block_layout(K, type, blk);
    const auto& seg = bytes.segments[static_cast<size_t>(i)];
    const std::string bad = bind_cached_block(blk.desc, seg, size, bytes.owner, &blk.data);
    if (!bad.empty()) return refuse("block " + std::to_string(i) + " " + bad);
    p->bytes += static_cast<int64_t>(seg.size());
    p->blocks.push_back(std::move(blk));
  }
  if (next != N) return refuse("blocks cover " + std::to_string(next) + " of " + std::to_string(N) + " columns");
  return p;
}

std::string packed_layout_cpu_key() {
  const dnnl_version_t* v = dnnl_version();
  char isa[32];
  std::snprintf(isa, sizeof isa, "0x%x", static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
  std::string key = "onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
                    " (" + v->hash + "); isa " + isa + "; cpu";
  for (const auto& name : cpu_feature_names(cpu_features())) key += " " + name;
  return key;
}

const char* gemm_bf16_implementation() {
  static const std::string name = matmul_implementation(
      matrix2d(128, 768, 768, dt::bf16), dnnl::memory::desc(dims{768, 256}, dt::bf16, dnnl::memory::format_tag::any),
      matrix2d(128, 256, 256));
  return name.c_str();
}

const char* gemm_f32_implementation() {
  static const std::string name = matmul_implementation(
      matrix2d(128, 768, 768), dnnl::memory::desc(dims{768, 256}, dt::f32, dnnl::memory::format_tag::any),
      matrix2d(128, 256, 256));
  return name.c_str();
}

void gemm_f32_packed(int64_t M, const float* A, int64_t lda, const PackedGemmB& B, float* C, int64_t ldc,
                     const GemmEpilogue& ep, ThreadPool* pool) {
  if (M <= 0 || B.N <= 0) return;
  if (B.s8) {
    gemm_f32_s8_dynamic(M, A, lda, *B.s8, C, ldc, ep, pool);
    return;
  }
  const int64_t K = B.K;
  const bool bf16 = B.precision == PackedPrecision::kBf16;
  if (lda != K) {  // brgemm needs dense rows; callers pass contiguous activations
    std::vector<float> dense(static_cast<size_t>(M * K));
    for (int64_t i = 0; i < M; ++i) std::copy(A + i * lda, A + i * lda + K, dense.begin() + i * K);
    gemm_f32_packed(M, dense.data(), K, B, C, ldc, ep, pool);
    return;
  }
  const int64_t col_blocks = static_cast<int64_t>(B.blocks.size());
  const int act = static_cast<int>(ep.activation);
  // bf16 weights: the activations once in bf16 (dense [M, K]), read by every tile.
  const void* src = A;
  if (bf16) {
    auto* rows = static_cast<uint16_t*>(thread_buffer<kBf16Rows>(static_cast<size_t>(M * K) * sizeof(uint16_t)));
    convert_f32_to_bf16(A, rows, M * K);
    src = rows;
  }
  const size_t src_elem = bf16 ? sizeof(uint16_t) : sizeof(float);
  const dt src_type = packed_type(B.precision);
  run_tiles(M, col_blocks, pool, [&](int64_t m0, int64_t m, int64_t block) {
    const auto& blk = B.blocks[static_cast<size_t>(block)];
    // brgemm (the fast implementation) needs dense source and destination: a column block
    // is computed into a dense per-thread tile, then copied into C with the residual added.
    const bool direct = blk.n == ldc && !ep.residual;
    float* dst = direct ? C + m0 * ldc : static_cast<float*>(thread_buffer<kTile>(static_cast<size_t>(m * blk.n) * sizeof(float)));
    const Key key{-1, m, K, blk.n, blk.layout, ep.bias != nullptr, act, static_cast<int64_t>(B.precision)};
    BoundPrimitive& e = bound_primitive(key, [&] {
      dnnl::primitive_attr attr = base_attr();
      if (ep.activation == GemmActivation::kGeluErf) {
        dnnl::post_ops po;
        po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
        attr.set_post_ops(po);
      }
      auto bias = ep.bias ? dnnl::memory::desc(dims{1, blk.n}, dt::f32, dims{blk.n, 1}) : dnnl::memory::desc();
      return dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(matrix2d(m, K, K, src_type), blk.desc, bias, matrix2d(m, blk.n, blk.n)), attr, engine());
    });
    const void* tile_src = static_cast<const char*>(src) + static_cast<size_t>(m0 * lda) * src_elem;
    execute_bound(e, tile_src, blk.data.get(), dst, ep.bias ? ep.bias + blk.n0 : nullptr);
    if (direct) return;
    for (int64_t i = 0; i < m; ++i) {
      float* out = C + (m0 + i) * ldc + blk.n0;
      const float* in = dst + i * blk.n;
      if (ep.residual) {
        const float* r = ep.residual + (m0 + i) * ep.ld_residual + blk.n0;
        for (int64_t j = 0; j < blk.n; ++j) out[j] = in[j] + r[j];
      } else {
        std::copy(in, in + blk.n, out);
      }
    }
  });
}

void apply_gemm_epilogue(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& ep) {
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    for (int64_t j = 0; j < N; ++j) {
      float v = c[j];
      if (ep.bias) v += ep.bias[j];
      if (ep.activation == GemmActivation::kGeluErf) v = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
      if (ep.residual) v += ep.residual[i * ep.ld_residual + j];
      c[j] = v;
    }
  }
}

void gemm_f32_reference(const GemmDesc& d, const float* A, const float* B, float* C) {
  for (int64_t b = 0; b < d.batch; ++b) {
    const float* a = A + b * d.stride_a;
    const float* bb = B + b * d.stride_b;
    float* c = C + b * d.stride_c;
    for (int64_t i = 0; i < d.M; ++i)
      for (int64_t j = 0; j < d.N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < d.K; ++k) {
          const float av = d.trans_a ? a[k * d.lda + i] : a[i * d.lda + k];
          const float bv = d.trans_b ? bb[j * d.ldb + k] : bb[k * d.ldb + j];
          acc += static_cast<double>(av) * bv;
        }
        c[i * d.ldc + j] = static_cast<float>(acc);
      }
  }
}

}  // namespace glassbox::kernels
