// attention_f32: per (batch, head) unit, on one thread: scores = Q_h K_h^T (oneDNN,
// strided operands, no copies), softmax(scale * scores + mask) row by row in place,
// context = P V_h written straight into the token-major output.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/kernel_error.h"
#include "kernels/softmax.h"

namespace glassbox::kernels {
namespace {

float* score_buffer(size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// The keys unit (b, h) reads: all of them, except a tail that every query row of the unit
// masks out (additive mask <= kMaskedOut, as padding masks of right-padded batches are:
// transformers' -10000 or the float minimum). Such a key's softmax weight is
// exp(scale * score + mask - row max), which underflows to exactly 0 in fp32 unless its
// scaled score exceeds an attended key's by ~9900; so the result is the one the unpadded
// sequence gives — bit for bit, whatever the padding (the same products of the same
// lengths) — and padded batches skip the tail's work. A row that attends to no key at
// all keeps every key (softmax over the whole masked row, as given).
constexpr float kMaskedOut = -1e4f;

int64_t attended_keys(const AttentionDesc& d, int64_t b, int64_t h, const float* mask) {
  if (!mask || d.mask_stride[3] != 1) return d.kv_len;
  const int64_t rows = d.mask_stride[2] == 0 ? 1 : d.q_len;
  int64_t keep = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float* m = mask + b * d.mask_stride[0] + h * d.mask_stride[1] + i * d.mask_stride[2];
    int64_t j = d.kv_len;
    while (j > 0 && m[j - 1] <= kMaskedOut) --j;  // (a NaN mask value is kept: it is not <= anything)
    if (j == 0 || j == d.kv_len) return d.kv_len;
    keep = std::max(keep, j);
  }
  return keep;
}

// True if a key or value row in [from, to) of this head holds a NaN/Inf. A masked key's
// weight is 0, and 0 * NaN (or 0 * Inf) is NaN in the unskipped product, as in ONNX Runtime's:
// skipping such a tail would hide the NaN, so the tail is then kept.
bool tail_has_non_finite(const float* kh, int64_t k_row, const float* vh, int64_t v_row, int64_t from, int64_t to,
                         int64_t D) {
  bool bad = false;
  for (int64_t j = from; j < to; ++j)
    for (int64_t c = 0; c < D; ++c) bad |= !std::isfinite(kh[j * k_row + c]) || !std::isfinite(vh[j * v_row + c]);
  return bad;
}

int64_t head_step(int64_t stride, int64_t head_dim) { return stride != 0 ? stride : head_dim; }

void attention_unit(const AttentionDesc& d, int64_t b, int64_t h, const float* q, const float* k, const float* v,
                    const float* mask, float* out) {
  const int64_t D = d.head_dim, g = h / d.kv_group;
  const float* qh = q + b * d.q_batch + h * head_step(d.q_head, D);
  const float* kh = k + b * d.k_batch + g * head_step(d.k_head, D);
  const float* vh = v + b * d.v_batch + g * head_step(d.v_head, D);
  int64_t kv = attended_keys(d, b, h, mask);
  if (kv < d.kv_len && tail_has_non_finite(kh, d.k_row, vh, d.v_row, kv, d.kv_len, D)) kv = d.kv_len;
  float* oh = out + b * d.out_batch + h * head_step(d.out_head, D);
  float* s = score_buffer(static_cast<size_t>(d.q_len * kv));
  GemmDesc qk;
  qk.M = d.q_len;
  qk.N = kv;
  qk.K = D;
  qk.trans_b = true;
  qk.lda = d.q_row;
  qk.ldb = d.k_row;
  qk.ldc = kv;
  gemm_f32(qk, qh, kh, s, nullptr);
  static const float kNoMask = 0.f;
  for (int64_t i = 0; i < d.q_len; ++i) {
    const float* m = mask ? mask + b * d.mask_stride[0] + h * d.mask_stride[1] + i * d.mask_stride[2] : &kNoMask;
    const int64_t ms = mask ? d.mask_stride[3] : 0;
    scaled_masked_softmax_row_f32(s + i * kv, m, ms, s + i * kv, kv, d.scale);
  }
  GemmDesc pv;
  pv.M = d.q_len;
  pv.N = D;
  pv.K = kv;
  pv.lda = kv;
  pv.ldb = d.v_row;
  pv.ldc = d.out_row;
  gemm_f32(pv, s, vh, oh, nullptr);
}

}  // namespace

void attention_f32(const AttentionDesc& d, const float* q, const float* k, const float* v, const float* mask, float* out,
                   ThreadPool* pool) {
  if (d.batch <= 0 || d.heads <= 0 || d.q_len <= 0 || d.head_dim <= 0) return;
  const int64_t units = d.batch * d.heads;
  auto run = [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) attention_unit(d, u / d.heads, u % d.heads, q, k, v, mask, out);
  };
  if (pool) parallel_for_rethrow(*pool, units, 1, run);  // a unit's GEMM may throw KernelError
  else run(0, units);
}

void attention_f32_reference(const AttentionDesc& d, const float* q, const float* k, const float* v, const float* mask,
                             float* out) {
  std::vector<double> p(static_cast<size_t>(std::max<int64_t>(d.kv_len, 1)));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.q_len; ++i) {
        const int64_t g = h / d.kv_group;
        const float* qi = q + b * d.q_batch + i * d.q_row + h * head_step(d.q_head, d.head_dim);
        double mx = -INFINITY;
        for (int64_t j = 0; j < d.kv_len; ++j) {
          const float* kj = k + b * d.k_batch + j * d.k_row + g * head_step(d.k_head, d.head_dim);
          double dot = 0;
          for (int64_t c = 0; c < d.head_dim; ++c) dot += static_cast<double>(qi[c]) * kj[c];
          double m = 0;
          if (mask)
            m = mask[b * d.mask_stride[0] + h * d.mask_stride[1] + i * d.mask_stride[2] + j * d.mask_stride[3]];
          p[static_cast<size_t>(j)] = dot * d.scale + m;
          mx = std::max(mx, p[static_cast<size_t>(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < d.kv_len; ++j) sum += (p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - mx));
        float* oi = out + b * d.out_batch + i * d.out_row + h * head_step(d.out_head, d.head_dim);
        for (int64_t c = 0; c < d.head_dim; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < d.kv_len; ++j)
            acc += p[static_cast<size_t>(j)] / sum * v[b * d.v_batch + j * d.v_row + g * head_step(d.v_head, d.head_dim) + c];
          oi[c] = static_cast<float>(acc);
        }
      }
}

}  // namespace glassbox::kernels
