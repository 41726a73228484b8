// gemm_f32 on oneDNN's matmul primitive.
//
// Threads: Debian's libdnnl 2.6 is built with the OpenMP CPU runtime
// (DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP), so its parallelism is the calling
// thread's OpenMP thread count. Before each execute we set that count to the
// caller's cap via omp_set_num_threads, looked up at run time from the OpenMP
// library libdnnl already loads (no extra link flags; per-thread setting, so
// concurrent sessions with different caps do not interfere).
//
// Primitive cache: creating a matmul primitive costs far more than a small
// multiply, so primitives are cached by (shape, strides, transposes) behind a
// mutex; execution is concurrent (oneDNN primitives are stateless to execute).
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/gemm.h"

static_assert(DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP, "gemm_dnnl.cpp assumes oneDNN's OpenMP runtime; see docs/kernels.md");

namespace glassbox::kernels {
namespace {

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t>;

struct Entry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

struct Cache {
  std::mutex mu;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::map<Key, Entry> primitives;
};

Cache& cache() {
  static Cache c;
  return c;
}

// Bound on cached primitives; dynamic shapes (sequence length) create new ones.
constexpr size_t kMaxCachedPrimitives = 512;

void set_omp_threads(int threads) {
  using Fn = void (*)(int);
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (fn && threads > 0) fn(threads);
}

dnnl::memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool trans, int64_t ld, int64_t bstride) {
  using dims = dnnl::memory::dims;
  // Logical [batch, rows, cols]; stored row-major with leading dim ld, or transposed.
  dims shape{batch, rows, cols};
  dims strides = trans ? dims{bstride, 1, ld} : dims{bstride, ld, 1};
  if (batch == 1) strides[0] = rows * cols;  // unused stride; keep it valid
  return dnnl::memory::desc(shape, dnnl::memory::data_type::f32, strides);
}

Entry get_primitive(const GemmDesc& d) {
  Cache& c = cache();
  const Key key{d.batch, d.M, d.N, d.K, d.trans_a, d.trans_b, d.lda, d.ldb, d.ldc, d.stride_a, d.stride_b, d.stride_c};
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.primitives.find(key);
  if (it != c.primitives.end()) return it->second;
  const bool shared_b = d.stride_b == 0 && d.batch > 1;
  auto a = matrix_desc(d.batch, d.M, d.K, d.trans_a, d.lda, d.stride_a);
  auto b = matrix_desc(shared_b ? 1 : d.batch, d.K, d.N, d.trans_b, d.ldb, shared_b ? d.K * d.N : d.stride_b);
  auto cdesc = matrix_desc(d.batch, d.M, d.N, false, d.ldc, d.stride_c);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, cdesc), c.engine);
  Entry e{pd, dnnl::matmul(pd)};
  if (c.primitives.size() >= kMaxCachedPrimitives) c.primitives.clear();
  c.primitives.emplace(key, e);
  return e;
}

}  // namespace

void gemm_f32(const GemmDesc& d, const float* A, const float* B, float* C, int threads) {
  if (d.batch <= 0 || d.M <= 0 || d.N <= 0) return;
  if (d.K == 0) {  // empty sum
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < d.M; ++i)
        for (int64_t j = 0; j < d.N; ++j) C[b * d.stride_c + i * d.ldc + j] = 0.f;
    return;
  }
  const Entry e = get_primitive(d);
  const auto& pd = e.pd;
  Cache& c = cache();
  dnnl::memory ma(pd.src_desc(), c.engine, const_cast<float*>(A));
  dnnl::memory mb(pd.weights_desc(), c.engine, const_cast<float*>(B));
  dnnl::memory mc(pd.dst_desc(), c.engine, C);
  set_omp_threads(threads);
  dnnl::stream s(c.engine);
  e.prim.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  s.wait();
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
