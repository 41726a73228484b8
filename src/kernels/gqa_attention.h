// Grouped-query attention over a KV cache, as ONNX Runtime's com.microsoft GroupQueryAttention
// computes it on CPU: heads / kv_heads query heads share one key/value head; each batch row has its
// own number of cached rows; keys are visible causally (and within a local window when one is set).
// Pure compute on pointers and sizes; the op (src/ops/group_query_attention.cpp) validates shapes,
// applies rotary and lays Q/K/V out as below.
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

struct GqaDims {
  int64_t batch = 0, seq = 0;       // new tokens per row (S)
  int64_t heads = 0, kv_heads = 0;  // heads % kv_heads == 0
  int64_t head = 0;                 // head size
  int64_t past_len = 0;             // the past buffers' sequence dim (0 when there is no past)
  int64_t present_len = 0;          // the present buffers' sequence dim (>= past_rows[b] + seq for every b)
};

struct GqaScoring {
  float scale = 1.0f;           // multiplies Q.K
  float softcap = 0.0f;         // > 0: score = softcap * tanh(score / softcap), after scale
  int64_t local_window = -1;    // > 0: a query at causal length c sees keys [max(0, c - local_window), c)
  bool smooth_softmax = false;  // softmax with an extra logit 0 in the denominator
};

// q [B, heads, S, head]; k, v [B, kv_heads, S, head] (rotary already applied); past_k, past_v
// [B, kv_heads, past_len, head] or nullptr; past_rows[b]: cached rows of row b (its new keys go to
// rows past_rows[b] .. past_rows[b] + S - 1 of present). present_k, present_v [B, kv_heads,
// present_len, head]: the cached rows, then the new ones, zeros after. out [B, S, heads * head]: the
// query at row s of batch row b attends to keys [0, past_rows[b] + s + 1) (causal; the last
// local_window of them when set).
void gqa_attention_f32(const GqaDims& d, const GqaScoring& sc, const float* q, const float* k, const float* v,
                       const float* past_k, const float* past_v, const int64_t* past_rows, float* present_k,
                       float* present_v, float* out, ThreadPool* pool);

// The same attention over keys and values already in per-row caches (the new rows appended at past_rows[b]):
// row b's kv head g holds position t at k_rows[b] + (g * capacities[b] + t) * head (v_rows likewise).
// d.present_len >= past_rows[b] + seq for every b (it sizes the scores); d.past_len is not read.
void gqa_attention_cached_f32(const GqaDims& d, const GqaScoring& sc, const float* q, const float* const* k_rows,
                              const float* const* v_rows, const int64_t* capacities, const int64_t* past_rows, float* out,
                              ThreadPool* pool);

}  // namespace glassbox::kernels
