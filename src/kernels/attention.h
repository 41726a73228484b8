// Multi-head scaled dot-product attention, fused:
//   out[b, i, h, :] = softmax_j(scale * Q[b, i, h, :] . K[b, j, g, :] + mask[b, h, i, j]) . V[b, j, g, :]
// with g = h / kv_group (grouped-query attention; 1 = one key/value head per query head).
// An encoder's Q, K and V are read where the projections wrote them ([batch, tokens, heads * head_dim]
// rows with any row stride), and the context is written in the same token-major layout,
// so the four head transposes of the unfused graph disappear; a decoder's head-major
// [batch, heads, tokens, head_dim] tensors are read in place through the head strides. Each (batch, head) pair
// is one unit of work on the pool: its score matrix (q_len x kv_len floats, 64 KiB at
// 128 tokens) stays in the thread's cache between the two products and the softmax.
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

struct AttentionDesc {
  int64_t batch = 1, heads = 1, q_len = 0, kv_len = 0, head_dim = 0;
  // Element offsets between consecutive tokens and consecutive batch items; head h of a
  // token starts h * head_dim elements into its row.
  int64_t q_row = 0, k_row = 0, v_row = 0, out_row = 0;
  int64_t q_batch = 0, k_batch = 0, v_batch = 0, out_batch = 0;
  // Element offsets between consecutive heads; 0 = head_dim (the heads side by side in a token's row,
  // as above). Head-major tensors [batch, heads, tokens, head_dim] give tokens * head_dim.
  int64_t q_head = 0, k_head = 0, v_head = 0, out_head = 0;
  // Query heads per key/value head (grouped-query attention): query head h reads key/value head
  // h / kv_group, so K and V hold heads / kv_group heads.
  int64_t kv_group = 1;
  float scale = 1.f;
  // Additive mask (nullptr: none): element [b, h, i, j] at
  // mask[b * mask_stride[0] + h * mask_stride[1] + i * mask_stride[2] + j * mask_stride[3]];
  // a stride of 0 broadcasts. mask_stride[3] must be 0 or 1.
  int64_t mask_stride[4] = {0, 0, 0, 0};
};

// Overwrites out. Units (batch, head) run on `pool` (nullptr: the calling thread).
void attention_f32(const AttentionDesc& d, const float* q, const float* k, const float* v, const float* mask, float* out,
                   ThreadPool* pool);

// Plain loops with double accumulation (test reference).
void attention_f32_reference(const AttentionDesc& d, const float* q, const float* k, const float* v, const float* mask,
                             float* out);

}  // namespace glassbox::kernels
