// gemm_u8s8_packed and the int8-dynamic gemm_f32_s8_dynamic on oneDNN's int8 matmul
// (u8 src, s8 weights, s32 dst), with the threading design, primitive cache and tile
// scheduler of gemm_dnnl.cpp (kernels/dnnl_common.h). Zero points, scales and the
// epilogue are applied while each tile is copied out (see gemm_int8.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/thread_pool.h"
#include "kernels/cpu_features.h"
#if GLASSBOX_KERNELS_X86
#include <immintrin.h>
#endif
#include "kernels/dnnl_common.h"
#include "kernels/gemm_int8.h"
#include "kernels/layer_norm.h"
#include "kernels/quantize.h"

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
  std::vector<float> scale;     // pack_gemm_b_s8_from_f32: [N] per-column weight scales
  int64_t bytes = 0;
};

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

using namespace dnnl_common;

dnnl::memory::desc dense(int64_t rows, int64_t cols, dt type) {
  return dnnl::memory::desc(dims{rows, cols}, type, dims{cols, 1});
}

// The s32 product sum_k A[i, k] * B[k, j] (A u8 [M, K] dense, no zero points), tile by
// tile: finish(m0, m, block, acc) with the tile's dense m x block.n accumulator.
template <class Finish>
void u8s8_tiles(int64_t M, const uint8_t* A, const PackedGemmS8B& B, ThreadPool* pool, const Finish& finish) {
  const int64_t K = B.K;
  run_tiles(M, static_cast<int64_t>(B.blocks.size()), pool, [&](int64_t m0, int64_t m, int64_t block) {
    const auto& blk = B.blocks[static_cast<size_t>(block)];
    auto* acc = static_cast<int32_t*>(thread_buffer<kTile>(static_cast<size_t>(m * blk.n) * sizeof(int32_t)));
    if (B.fast) {
      BoundPrimitive& e = bound_primitive({-2, m, K, blk.n, blk.layout}, [&] {
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(dense(m, K, dt::u8), blk.desc, dense(m, blk.n, dt::s32)),
                                            base_attr(), engine());
      });
      execute_bound(e, A + m0 * K, blk.data.get(), acc);
    } else {
      gemm_integer_reference<uint8_t, int8_t>(m, blk.n, K, A + m0 * K, K, nullptr, false, B.plain.data() + blk.n0, B.N,
                                              nullptr, false, acc, blk.n);
    }
    finish(m0, m, blk, acc);
  });
}

// The s8 weights layout of a [K, n] block (u8 activations, s32 product), shared and memoized.
void set_block_layout(int64_t K, PackedGemmS8B::Block& blk) {
  const BlockLayout l = block_layout(K, blk.n, dt::u8, dt::s8, dt::s32);
  blk.layout = l.id;
  blk.desc = l.desc;
}

// AVX-512 forms of the tile copy-out, used only on the fast path (VNNI implies AVX-512 F/BW).
// Each equals its scalar loop bit for bit: int32 arithmetic wraps like the scalar uint32 one,
// cvtepi32_ps rounds like static_cast<float> (default MXCSR), and mul then add are two
// roundings (fp-contract=off keeps the compiler from fusing them). Return the columns done.
#if GLASSBOX_KERNELS_X86
#define GB_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq"), optimize("fp-contract=off")))

// _mm512_cvtepi32_ps with a defined pass-through (GCC 12 warns on the undefined one).
GB_AVX512 inline __m512 to_f32(__m512i v) { return _mm512_mask_cvtepi32_ps(_mm512_setzero_ps(), 0xFFFF, v); }

// out[j] = in[j] - za * cs[j] (- zb[j] * rs + K * za * zb[j] when zb), as s32 or times s[j] (+ b[j])
// (+ res[j]: callers pass res only without an activation in between).
GB_AVX512 int64_t finish_row_avx512(int64_t n, const int32_t* in, const int32_t* cs, const int32_t* zb, uint32_t za,
                                    uint32_t rs, uint32_t K, int32_t* out_s32, float* out_f32, const float* s,
                                    const float* b, const float* res) {
  const __m512i vza = _mm512_set1_epi32(static_cast<int32_t>(za)), vrs = _mm512_set1_epi32(static_cast<int32_t>(rs));
  const __m512i vkza = _mm512_set1_epi32(static_cast<int32_t>(K * za));
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512i v = _mm512_sub_epi32(_mm512_loadu_si512(in + j), _mm512_mullo_epi32(vza, _mm512_loadu_si512(cs + j)));
    if (zb) {
      const __m512i z = _mm512_loadu_si512(zb + j);
      v = _mm512_add_epi32(_mm512_sub_epi32(v, _mm512_mullo_epi32(z, vrs)), _mm512_mullo_epi32(vkza, z));
    }
    if (out_s32) {
      _mm512_storeu_si512(out_s32 + j, v);
      continue;
    }
    __m512 f = _mm512_mul_ps(to_f32(v), _mm512_loadu_ps(s + j));
    if (b) f = _mm512_add_ps(f, _mm512_loadu_ps(b + j));
    if (res) f = _mm512_add_ps(f, _mm512_loadu_ps(res + j));
    _mm512_storeu_ps(out_f32 + j, f);
  }
  return j;
}

// out[j] = float(in[j] - z * cs[j]) * (s * sb[j]) (+ b[j]) (+ res[j] when res; callers pass
// res only without an activation in between). Exact in int32 while K < 66000 (checked by the caller).
GB_AVX512 int64_t dynamic_row_avx512(int64_t n, const int32_t* in, const int32_t* cs, int32_t z, float s,
                                     const float* sb, const float* b, const float* res, float* out) {
  const __m512i vz = _mm512_set1_epi32(z);
  const __m512 vs = _mm512_set1_ps(s);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512i v = _mm512_sub_epi32(_mm512_loadu_si512(in + j), _mm512_mullo_epi32(vz, _mm512_loadu_si512(cs + j)));
    __m512 f = _mm512_mul_ps(to_f32(v), _mm512_mul_ps(vs, _mm512_loadu_ps(sb + j)));
    if (b) f = _mm512_add_ps(f, _mm512_loadu_ps(b + j));
    if (res) f = _mm512_add_ps(f, _mm512_loadu_ps(res + j));
    _mm512_storeu_ps(out + j, f);
  }
  return j;
}
#else
// Not x86: the fast path is never taken (gemm_u8s8_fast_available() needs VNNI); 0 columns done.
int64_t finish_row_avx512(int64_t, const int32_t*, const int32_t*, const int32_t*, uint32_t, uint32_t, uint32_t, int32_t*,
                          float*, const float*, const float*, const float*) {
  return 0;
}
int64_t dynamic_row_avx512(int64_t, const int32_t*, const int32_t*, int32_t, float, const float*, const float*,
                           const float*, float*) {
  return 0;
}
#endif

// MatMulIntegerToFloat's fused GELU and residual on one finished row segment [n0, n0 + n) of row r;
// the residual from column res_from on (the vector copy-out added it before when no GELU sits between).
void apply_row_epilogue(const QGemmArgs& a, int64_t r, int64_t n0, int64_t n, int64_t res_from, float* out) {
  if (a.activation == GemmActivation::kGeluErf) gelu_erf_f32(out, out, n, nullptr);
  if (a.residual) {
    const float* res = a.residual + r * a.ld_residual + n0;
    for (int64_t j = res_from; j < n; ++j) out[j] += res[j];
  }
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
    int32_t* out_s32 = a.C_s32 ? a.C_s32 + r * a.ldc + n0 : nullptr;
    float* out_f32 = a.C_f32 ? a.C_f32 + r * a.ldc + n0 : nullptr;
    const float* s = a.C_f32 ? a.scale + n0 : nullptr;
    const float* bias = a.C_f32 && a.bias ? a.bias + n0 : nullptr;
    const bool gelu = a.activation == GemmActivation::kGeluErf;
    const float* res = a.C_f32 && a.residual && !gelu ? a.residual + r * a.ld_residual + n0 : nullptr;
    const int64_t j0 = B.fast ? finish_row_avx512(n, in, cs, zb, za, rs, K, out_s32, out_f32, s, bias, res) : 0;
    if (a.C_s32) {
      int32_t* out = out_s32;
      for (int64_t j = j0; j < n; ++j) out[j] = value(j);
    } else {
      float* out = out_f32;
      if (a.bias) {
        const float* b = bias;
        for (int64_t j = j0; j < n; ++j) {
          const float prod = static_cast<float>(value(j)) * s[j];  // Cast, Mul, then Add: two roundings
          out[j] = prod + b[j];
        }
      } else {
        for (int64_t j = j0; j < n; ++j) out[j] = static_cast<float>(value(j)) * s[j];
      }
      apply_row_epilogue(a, r, n0, n, res ? j0 : 0, out);
    }
  }
}

}  // namespace

bool gemm_u8s8_fast_available() {
  // oneDNN's u8 x s8 kernels are exact only with VNNI (gemm_int8.h): the CPU must have it and
  // oneDNN must dispatch to it -- DNNL_MAX_CPU_ISA (read by oneDNN) or dnnl_set_max_cpu_isa can hold
  // oneDNN below the CPU, and its AVX2 int8 path then saturates (measured: 64.75 for an exact 128).
  static const bool ok = [] {
    const auto vnni = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);
    return cpu_features().int8_vnni() && (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & vnni) == vnni;
  }();
  return ok;
}

namespace {

std::shared_ptr<PackedGemmS8B> pack_s8(int64_t K, int64_t N, int64_t ldb, const int8_t* B, ThreadPool* pool) {
  auto p = std::make_shared<PackedGemmS8B>();
  p->K = K;
  p->N = N;
  p->fast = gemm_u8s8_fast_available();
  p->colsum.assign(static_cast<size_t>(N), 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) p->colsum[j] += B[k * ldb + j];
  const int64_t nb = column_block_width(N, pool);
  for (int64_t n0 = 0; n0 < N; n0 += nb) p->blocks.push_back({n0, std::min(nb, N - n0), -1, {}, {}});
  if (!p->fast) {
    p->plain.resize(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k) std::memcpy(p->plain.data() + k * N, B + k * ldb, static_cast<size_t>(N));
    p->bytes = K * N;
    return p;
  }
  for (auto& blk : p->blocks) set_block_layout(K, blk);
  auto reorder_block = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      auto& blk = p->blocks[static_cast<size_t>(i)];
      blk.data = reorder_into_new(dnnl::memory::desc(dims{K, blk.n}, dt::s8, dims{ldb, 1}), B + blk.n0, blk.desc);
    }
  };
  if (pool) parallel_for_rethrow(*pool, static_cast<int64_t>(p->blocks.size()), 1, reorder_block);
  else reorder_block(0, static_cast<int64_t>(p->blocks.size()));
  for (const auto& blk : p->blocks) p->bytes += static_cast<int64_t>(blk.desc.get_size());
  return p;
}

}  // namespace

std::shared_ptr<const PackedGemmS8B> pack_gemm_b_s8(int64_t K, int64_t N, int64_t ldb, const int8_t* B,
                                                    ThreadPool* pool) {
  return pack_s8(K, N, ldb, B, pool);
}

int64_t packed_gemm_b_s8_bytes(const PackedGemmS8B& b) {
  return b.bytes + b.N * 4 + static_cast<int64_t>(b.scale.size() * sizeof(float));
}

// Meta text: "gemm_b_s8 v2 K N fast scaled blocks" then " n0:n:bytes" per block. Segments:
// the column sums, the per-column weight scales when scaled (int8-dynamic), then the plain
// weights (reference path) or one per block (fast path).
PackedBytes packed_gemm_b_s8_to_bytes(std::shared_ptr<const PackedGemmS8B> b) {
  PackedBytes out;
  const bool scaled = !b->scale.empty();
  out.meta = "gemm_b_s8 v2 " + std::to_string(b->K) + " " + std::to_string(b->N) + " " + (b->fast ? "1" : "0") + " " +
             (scaled ? "1" : "0") + " " + std::to_string(b->blocks.size());
  out.segments.emplace_back(reinterpret_cast<const std::byte*>(b->colsum.data()), b->colsum.size() * sizeof(int32_t));
  if (scaled) out.segments.emplace_back(reinterpret_cast<const std::byte*>(b->scale.data()), b->scale.size() * sizeof(float));
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
  int64_t k = 0, n = 0, fast = -1, scaled = -1, count = -1;
  in >> kind >> version >> k >> n >> fast >> scaled >> count;
  if (!in || kind != "gemm_b_s8" || version != "v2" || (scaled != 0 && scaled != 1))
    return refuse("not a gemm_b_s8 v2 packing");
  if (k != K || n != N) return refuse("packed for [" + std::to_string(k) + ", " + std::to_string(n) + "]");
  if ((fast == 1) != gemm_u8s8_fast_available()) return refuse("packed for the other int8 path (VNNI differs)");
  const size_t head = 1 + static_cast<size_t>(scaled) + (fast ? 0 : 1);  // segments before the blocks
  if (count < 0 || bytes.segments.size() != (fast ? head + static_cast<size_t>(count) : head))
    return refuse("block count differs from its segments");
  auto p = std::make_shared<PackedGemmS8B>();
  p->K = K;
  p->N = N;
  p->fast = fast == 1;
  const auto& sums = bytes.segments[0];
  if (sums.size() != static_cast<size_t>(N) * sizeof(int32_t)) return refuse("column sums have the wrong size");
  p->colsum.resize(static_cast<size_t>(N));
  std::memcpy(p->colsum.data(), sums.data(), sums.size());
  if (scaled) {
    const auto& scales = bytes.segments[1];
    if (scales.size() != static_cast<size_t>(N) * sizeof(float)) return refuse("column scales have the wrong size");
    p->scale.resize(static_cast<size_t>(N));
    std::memcpy(p->scale.data(), scales.data(), scales.size());
  }
  if (!p->fast) {
    const auto& plain = bytes.segments[head - 1];
    if (plain.size() != static_cast<size_t>(K * N)) return refuse("plain weights have the wrong size");
    p->plain.assign(reinterpret_cast<const int8_t*>(plain.data()), reinterpret_cast<const int8_t*>(plain.data()) + plain.size());
    p->bytes = K * N;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < count; ++i) {
    PackedGemmS8B::Block blk;
    int64_t size = -1;
    const std::string gap = read_block_entry(in, i, next, N, &blk.n0, &blk.n, &size);
    if (!gap.empty()) return refuse(gap);
    next = blk.n0 + blk.n;
    if (p->fast) {
      set_block_layout(K, blk);
      const auto& seg = bytes.segments[head + static_cast<size_t>(i)];
      const std::string bad = bind_cached_block(blk.desc, seg, size, bytes.owner, &blk.data);
      if (!bad.empty()) return refuse("block " + std::to_string(i) + " " + bad);
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
  const int32_t* rs = rowsum.empty() ? nullptr : rowsum.data();
  u8s8_tiles(M, a.A, B, pool, [&](int64_t m0, int64_t m, const PackedGemmS8B::Block& blk, const int32_t* acc) {
    finish_tile(a, B, rs, m0, m, blk.n0, blk.n, acc);
  });
}

void quantize_columns_s8(int64_t K, int64_t N, bool trans_b, int64_t ldb, const void* B, int8_t* q, float* scale) {
  // B may be misaligned for floats (a mapped model file): rows are copied out with memcpy.
  const char* base = static_cast<const char*>(B);
  const int64_t rows = trans_b ? N : K, len = trans_b ? K : N;
  std::vector<float> row(static_cast<size_t>(len));
  auto load = [&](int64_t r) {
    std::memcpy(row.data(), base + r * ldb * static_cast<int64_t>(sizeof(float)), static_cast<size_t>(len) * sizeof(float));
  };
  std::vector<float> amax(static_cast<size_t>(N), 0.f);
  std::vector<char> finite(static_cast<size_t>(N), 1);
  auto see = [&](int64_t j, float v) {
    if (!std::isfinite(v)) finite[j] = 0;
    else amax[j] = std::max(amax[j], std::fabs(v));
  };
  for (int64_t r = 0; r < rows; ++r) {
    load(r);
    for (int64_t c = 0; c < len; ++c) see(trans_b ? r : c, row[c]);
  }
  for (int64_t j = 0; j < N; ++j)
    scale[j] = finite[j] ? amax[j] / 127.f : std::numeric_limits<float>::quiet_NaN();
  auto put = [&](int64_t k, int64_t j, float v) {
    const float s = scale[j];
    q[k * N + j] = s > 0.f ? static_cast<int8_t>(std::clamp(std::nearbyint(v / s), -127.f, 127.f)) : int8_t{0};
  };
  for (int64_t r = 0; r < rows; ++r) {
    load(r);
    for (int64_t c = 0; c < len; ++c) trans_b ? put(c, r, row[c]) : put(r, c, row[c]);
  }
}

void quantize_rows_u8(int64_t M, int64_t K, const float* A, int64_t lda, uint8_t* q, float* scale, int32_t* zero_point) {
  for (int64_t i = 0; i < M; ++i) {
    const float* a = A + i * lda;
    float lo = 0.f, hi = 0.f;
    minmax_f32(a, K, &lo, &hi);
    float s = (hi - lo) / 255.f;
    if (!std::isfinite(s)) s = std::numeric_limits<float>::quiet_NaN();  // an infinity: outputs NaN
    else if (!(s > 0.f)) s = 1.f;  // a row of zeros (or a range so small the scale underflows)
    const int32_t zp = std::isnan(s) ? 0 : saturate_round<uint8_t>(-lo / s, 0);
    quantize_f32_u8(a, K, s, zp, q + i * K);
    scale[i] = s;
    zero_point[i] = zp;
  }
}

std::shared_ptr<const PackedGemmS8B> pack_gemm_b_s8_from_f32(int64_t K, int64_t N, bool trans_b, int64_t ldb,
                                                              const void* B, ThreadPool* pool) {
  std::vector<int8_t> q(static_cast<size_t>(K * N));
  std::vector<float> scale(static_cast<size_t>(N));
  quantize_columns_s8(K, N, trans_b, ldb, B, q.data(), scale.data());
  auto p = pack_s8(K, N, N, q.data(), pool);
  p->scale = std::move(scale);
  return p;
}

void gemm_f32_s8_dynamic(int64_t M, const float* A, int64_t lda, const PackedGemmS8B& B, float* C, int64_t ldc,
                         const GemmEpilogue& ep, ThreadPool* pool) {
  const int64_t K = B.K;
  if (M <= 0 || B.N <= 0) return;
  // The calling thread's buffers, read by every tile while it waits in run_tiles.
  auto* qa = static_cast<uint8_t*>(thread_buffer<kU8Rows>(static_cast<size_t>(M * K)));
  auto* sa = static_cast<float*>(thread_buffer<kRowParams>(static_cast<size_t>(M) * (sizeof(float) + sizeof(int32_t))));
  auto* za = reinterpret_cast<int32_t*>(sa + M);
  auto quantize = [&](int64_t r0, int64_t r1) { quantize_rows_u8(r1 - r0, K, A + r0 * lda, lda, qa + r0 * K, sa + r0, za + r0); };
  if (pool && pool->size() > 1 && M * K >= 32768) pool->parallel_for(M, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), quantize);
  else quantize(0, M);
  const bool vector_ok = B.fast && K < 66000;  // int32 arithmetic is exact (see below)
  u8s8_tiles(M, qa, B, pool, [&](int64_t m0, int64_t m, const PackedGemmS8B::Block& blk, const int32_t* acc) {
    const int64_t n0 = blk.n0, n = blk.n;
    const int32_t* cs = B.colsum.data() + n0;
    const float* sb = B.scale.data() + n0;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t r = m0 + i;
      const int64_t z = za[r];
      const float s = sa[r];
      const int32_t* in = acc + i * n;
      float* out = C + r * ldc + n0;
      // sum_k (qa - za) qb = sum_k qa qb - za colsum; |value| <= 255 * 127 * K fits int64 (and int32 for K < 66000).
      const float* res = ep.residual ? ep.residual + r * ep.ld_residual + n0 : nullptr;
      const bool gelu = ep.activation == GemmActivation::kGeluErf;
      const float* bias = ep.bias ? ep.bias + n0 : nullptr;
      // The residual joins the vector loop when no activation sits between (same additions, same order).
      const int64_t j0 = vector_ok ? dynamic_row_avx512(n, in, cs, static_cast<int32_t>(z), s, sb, bias, gelu ? nullptr : res, out) : 0;
      if (bias) {
        for (int64_t j = j0; j < n; ++j) out[j] = static_cast<float>(in[j] - z * cs[j]) * (s * sb[j]) + bias[j];
      } else {
        for (int64_t j = j0; j < n; ++j) out[j] = static_cast<float>(in[j] - z * cs[j]) * (s * sb[j]);
      }
      if (gelu) gelu_erf_f32(out, out, n, nullptr);
      if (res) {
        for (int64_t j = gelu ? 0 : j0; j < n; ++j) out[j] += res[j];
      }
    }
  });
}

const char* gemm_u8s8_implementation() {
  static const std::string name =
      !gemm_u8s8_fast_available()
          ? std::string(cpu_features().int8_vnni() ? "reference loops (oneDNN's ISA is held below AVX-512 VNNI)"
                                    : cpu_features().arch == "aarch64" ? "reference loops (aarch64: no x86 VNNI path)"
                                                                        : "reference loops (no AVX-512 VNNI)")
          : matmul_implementation(dense(128, 768, dt::u8), dnnl::memory::desc(dims{768, 256}, dt::s8, dnnl::memory::format_tag::any),
                                  dense(128, 256, dt::s32));
  return name.c_str();
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
