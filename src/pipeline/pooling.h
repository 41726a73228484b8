// Text vectors from token vectors, as sentence-transformers' Pooling, Dense and Normalize
// modules compute them (their documented semantics, in float64 accumulators):
//   cls           the first position's vector
//   max           per dimension, the max over real tokens (-1e9 when there is none)
//   mean          sum over real tokens / max(count, 1e-9)
//   mean_sqrt_len_tokens  sum over real tokens / sqrt(max(count, 1e-9))
//   weightedmean  sum of (position + 1) * vector over real tokens / sum of (position + 1)
//   lasttoken     the vector of the last real token (zeros when there is none)
// "Real" = attention mask 1, minus the leading prompt positions when include_prompt is false.
// Several modes: their vectors concatenated in the order given.
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/pipeline.h"

namespace glassbox::pipeline {

// tokens: [seq, hidden] row-major; mask: one entry per real position (positions past its end
// are padding); skip_leading: prompt positions left out. Appends the pooled values to `out`.
void pool_tokens(const float* tokens, int64_t seq, int64_t hidden, const std::vector<uint32_t>& mask, int64_t skip_leading,
                 const std::vector<Pooling>& modes, std::vector<float>& out);

// The sparse (SPLADE) head: logits [seq, vocab] row-major, mask as for pool_tokens. Per vocabulary id,
// log1p(relu(logit)) (twice log1p for log1p_relu) of each real position (masked positions count as 0),
// then max or sum over positions; the nonzero entries, ids ascending, replace indices/values
// (head.top_k > 0: only the top_k largest, ties to the lower id).
void sparse_pool(const float* logits, int64_t seq, int64_t vocab, const std::vector<uint32_t>& mask, const SparseHead& head,
                 std::vector<uint32_t>& indices, std::vector<float>& values);

// v = activation(W v + b); v.size() must be layer.in.
void apply_dense(const DenseLayer& layer, std::vector<float>& v);

// v / max(|v|_2, 1e-12) (torch.nn.functional.normalize, what the Normalize module calls).
void l2_normalize(std::vector<float>& v);

}  // namespace glassbox::pipeline
