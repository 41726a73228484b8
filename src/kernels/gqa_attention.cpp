#include "kernels/gqa_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/thread_pool.h"

namespace glassbox::kernels {
namespace {

// Writes one kv head's present rows: the valid cached rows, the new rows, zeros after (ORT
// clears present before copying).
void fill_present(const GqaDims& d, const float* past, const float* fresh, int64_t rows_cached, float* present) {
  const int64_t h = d.head;
  std::memset(present, 0, sizeof(float) * static_cast<size_t>(d.present_len * h));
  if (rows_cached > 0) std::memcpy(present, past, sizeof(float) * static_cast<size_t>(rows_cached * h));
  std::memcpy(present + rows_cached * h, fresh, sizeof(float) * static_cast<size_t>(d.seq * h));
}

// Scores of keys [start, end) in place: softcap, then (smooth) softmax; keys before start get 0.
void normalize_scores(const GqaScoring& sc, float* s, int64_t start, int64_t end) {
  for (int64_t j = 0; j < start; ++j) s[j] = 0.0f;
  if (sc.softcap > 0.0f)
    for (int64_t j = start; j < end; ++j) s[j] = sc.softcap * std::tanh(s[j] / sc.softcap);
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t j = start; j < end; ++j) mx = std::max(mx, s[j]);
  if (sc.smooth_softmax) mx = std::max(mx, 0.0f);
  double sum = 0.0;
  for (int64_t j = start; j < end; ++j) {
    s[j] = std::exp(s[j] - mx);
    sum += s[j];
  }
  if (sc.smooth_softmax) sum += std::exp(-static_cast<double>(mx));
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t j = start; j < end; ++j) s[j] *= inv;
}

// One (batch row, query head): scores over the present keys, then the weighted sum of values.
void attend_head(const GqaDims& d, const GqaScoring& sc, const float* q, const float* pk, const float* pv,
                 int64_t rows_cached, float* out, int64_t out_stride, std::vector<float>& scores) {
  const int64_t h = d.head;
  for (int64_t s = 0; s < d.seq; ++s) {
    const int64_t causal = rows_cached + s + 1;
    const bool windowed = sc.local_window > 0 && causal > sc.local_window;
    const int64_t start = windowed ? causal - sc.local_window : 0;
    const float* qs = q + s * h;
    for (int64_t j = start; j < causal; ++j) {
      const float* kj = pk + j * h;
      float dot = 0.0f;
      for (int64_t c = 0; c < h; ++c) dot += qs[c] * kj[c];
      scores[j] = dot * sc.scale;
    }
    normalize_scores(sc, scores.data(), start, causal);
    float* o = out + s * out_stride;
    std::fill(o, o + h, 0.0f);
    for (int64_t j = start; j < causal; ++j) {
      const float w = scores[j];
      const float* vj = pv + j * h;
      for (int64_t c = 0; c < h; ++c) o[c] += w * vj[c];
    }
  }
}

}  // namespace

void gqa_attention_f32(const GqaDims& d, const GqaScoring& sc, const float* q, const float* k, const float* v,
                       const float* past_k, const float* past_v, const int64_t* past_rows, float* present_k,
                       float* present_v, float* out, ThreadPool* pool) {
  const int64_t h = d.head, plane = d.present_len * h, group = d.heads / d.kv_heads;
  auto copy = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {  // i = b * kv_heads + kv head
      const int64_t b = i / d.kv_heads;
      const int64_t past_off = i * d.past_len * h, new_off = i * d.seq * h;
      fill_present(d, past_k ? past_k + past_off : nullptr, k + new_off, past_rows[b], present_k + i * plane);
      fill_present(d, past_v ? past_v + past_off : nullptr, v + new_off, past_rows[b], present_v + i * plane);
    }
  };
  auto attend = [&](int64_t i0, int64_t i1) {
    std::vector<float> scores(static_cast<size_t>(d.present_len));
    for (int64_t i = i0; i < i1; ++i) {  // i = b * heads + query head
      const int64_t b = i / d.heads, hq = i % d.heads, kv = b * d.kv_heads + hq / group;
      attend_head(d, sc, q + i * d.seq * h, present_k + kv * plane, present_v + kv * plane, past_rows[b],
                  out + b * d.seq * d.heads * h + hq * h, d.heads * h, scores);
    }
  };
  if (pool) {
    pool->parallel_for(d.batch * d.kv_heads, 1, copy);
    pool->parallel_for(d.batch * d.heads, 1, attend);
  } else {
    copy(0, d.batch * d.kv_heads);
    attend(0, d.batch * d.heads);
  }
}

void gqa_attention_cached_f32(const GqaDims& d, const GqaScoring& sc, const float* q, const float* const* k_rows,
                              const float* const* v_rows, const int64_t* capacities, const int64_t* past_rows, float* out,
                              ThreadPool* pool) {
  const int64_t h = d.head, group = d.heads / d.kv_heads;
  auto attend = [&](int64_t i0, int64_t i1) {
    std::vector<float> scores(static_cast<size_t>(d.present_len));
    for (int64_t i = i0; i < i1; ++i) {  // i = b * heads + query head
      const int64_t b = i / d.heads, hq = i % d.heads, plane = (hq / group) * capacities[b] * h;
      attend_head(d, sc, q + i * d.seq * h, k_rows[b] + plane, v_rows[b] + plane, past_rows[b],
                  out + b * d.seq * d.heads * h + hq * h, d.heads * h, scores);
    }
  };
  if (pool) pool->parallel_for(d.batch * d.heads, 1, attend);
  else attend(0, d.batch * d.heads);
}

}  // namespace glassbox::kernels
