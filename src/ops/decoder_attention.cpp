// glassbox::DecoderAttention (internal, made by the decoder_attention_fusion pass): attention over
// head-major keys and values as decoders export it, from the rotated queries to the context before
// its head transpose:
//   Y = MatMul(ScaledMaskedSoftmax(MatMul(Q, Transpose[0,1,3,2](R(K))), mask, scale), R(V))
// Q [batch, heads, q_tokens, head_dim]; K, V [batch, kv_heads, kv_tokens, head_dim] (a decoder's
// present = Concat(past, new)), read in place. R is either nothing or torch's repeat_kv,
//   Reshape(Expand(Unsqueeze(X, axes [2]), e), r)   ([b, h, t, d] -> [b, h, g, t, d] -> [b, h * g, t, d]),
// whose e and r are computed at run time from the past length (inputs 4/5 for K, 6/7 for V; absent
// when R is nothing): query head h then reads key/value head h / (heads / kv_heads) with no copy,
// where the unfused graph copies every key and value g times and transposes the keys. The run
// checks that e and r are exactly that repeat and that the heads agree (MatMul's broadcasting of a
// single key/value head is kept); anything else is an error naming the shapes.
// mask broadcasts to [batch, heads, q_tokens, kv_tokens]. Y is [batch, heads, q_tokens, head_dim].
#include <algorithm>
#include <vector>

#include "kernels/attention.h"
#include "ops/attention_mask.h"
#include "ops/attr_util.h"

namespace glassbox::ops {
namespace {

constexpr const char* kOp = "DecoderAttention";

std::string dims_text(const std::vector<int64_t>& v) { return shape_to_string(Shape(v.begin(), v.end())); }

Result<std::vector<int64_t>> int64_vector(ComputeContext& ctx, size_t i, const char* what, size_t n) {
  GB_ASSIGN_OR_RETURN(const Tensor* t, require_input(ctx, i, what));
  if (t->dtype() != DataType::kInt64 || t->numel() != static_cast<int64_t>(n))
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": " + what + " must be " + std::to_string(n) + " int64 values, is " +
                        shape_to_string(t->shape()));
  return std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + n);
}

// The heads R(X) has for X [b, h, t, d]: h without a repeat; with one, h * g after checking that
// Expand(Unsqueeze(X, 2), e) is [b, h, g, t, d] and Reshape(., r) is [b, h * g, t, d].
Result<int64_t> repeated_heads(ComputeContext& ctx, const Shape& x, size_t expand_input, const char* name) {
  if (!ctx.input(expand_input)) return x[1];
  const std::string what = std::string(name) + "'s repeat";
  GB_ASSIGN_OR_RETURN(auto e, int64_vector(ctx, expand_input, (what + " (Expand shape)").c_str(), 5));
  GB_ASSIGN_OR_RETURN(auto r, int64_vector(ctx, expand_input + 1, (what + " (Reshape target)").c_str(), 4));
  const std::vector<int64_t> in{x[0], x[1], 1, x[2], x[3]};
  std::vector<int64_t> ex(5);
  bool ok = true;
  for (size_t i = 0; i < 5; ++i) {  // Expand is numpy broadcasting of the input and e
    ex[i] = in[i] == 1 ? e[i] : in[i];
    ok = ok && (e[i] == 1 || e[i] == in[i] || in[i] == 1);
    if (i != 2) ok = ok && ex[i] == in[i];  // only the inserted axis may grow
  }
  ok = ok && ex[2] >= 1;
  std::vector<int64_t> want{x[0], x[1] * ex[2], x[2], x[3]}, got(4);
  int64_t known = 1, inferred = 0;
  for (size_t i = 0; ok && i < 4; ++i) {  // Reshape, allowzero 0: 0 copies the input's dim, one -1 is inferred
    got[i] = r[i] == 0 ? ex[i] : r[i];
    if (got[i] == -1) ++inferred;
    else known *= got[i];
  }
  ok = ok && inferred <= 1;
  for (size_t i = 0; ok && i < 4; ++i)
    if (got[i] == -1) got[i] = known == 0 ? 0 : want[0] * want[1] * want[2] * want[3] / known;
  if (!ok || got != want)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": " + what + " expands " + shape_to_string(x) + " by " + dims_text(e) +
                        " and reshapes it to " + dims_text(r) + ", which is not the head repeat the fusion assumes",
                    "disable the graph pass decoder_attention_fusion (--disable-pass decoder_attention_fusion, or "
                    "session.disabled_passes in a --config file) and report the model");
  return want[1];
}

// The shapes one run works on: Q [B, H, S, D]; the keys/values the attention reads, [B, Hkv, T, D] (in cache
// mode the present the unfused graph would have made: the fed past's P positions, then the S new ones).
struct Dims {
  int64_t B = 0, H = 0, S = 0, D = 0, Hkv = 0, T = 0;
};

class DecoderAttentionOp final : public Op {
 public:
  DecoderAttentionOp(float scale, std::string cache_k, std::string cache_v)
      : scale_(scale), cache_k_(std::move(cache_k)), cache_v_(std::move(cache_v)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* q, require_input(ctx, 0, "Q"));
    GB_ASSIGN_OR_RETURN(const Tensor* k, require_input(ctx, 1, cached() ? "new K" : "K"));
    GB_ASSIGN_OR_RETURN(const Tensor* v, require_input(ctx, 2, cached() ? "new V" : "V"));
    const Tensor* mask = ctx.input(3);
    for (const Tensor* t : {q, k, v, mask})
      if (t && t->dtype() != DataType::kFloat32) return op_error(ctx, ErrorCode::kInternal, std::string(kOp) + " expects float32");
    const Shape &qs = q->shape(), &ks = k->shape();
    if (qs.size() != 4 || ks.size() != 4 || ks != v->shape() || qs[0] != ks[0] || qs[3] != ks[3])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(kOp) + ": Q " + shape_to_string(qs) + ", K " + shape_to_string(ks) + " and V " +
                          shape_to_string(v->shape()) + " must be [batch, heads, tokens, head_dim] with one batch, head_dim and K = V");
    Dims d{qs[0], qs[1], qs[2], qs[3], ks[1], ks[2]};
    int64_t past = 0;
    if (cached()) {
      GB_ASSIGN_OR_RETURN(past, past_positions(ctx, ks));
    }
    d.T = past + ks[2];
    const Shape present{d.B, d.Hkv, d.T, d.D};
    GB_ASSIGN_OR_RETURN(int64_t k_heads, repeated_heads(ctx, present, 4, "K"));
    GB_ASSIGN_OR_RETURN(int64_t v_heads, repeated_heads(ctx, present, 6, "V"));
    // MatMul broadcasts a single (repeated) head to all query heads; otherwise the counts must agree.
    if ((k_heads != d.H && k_heads != 1) || (v_heads != d.H && v_heads != 1) || d.Hkv == 0 || d.H % d.Hkv != 0)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(kOp) + ": " + std::to_string(d.H) + " query heads cannot read " + std::to_string(k_heads) +
                          " key and " + std::to_string(v_heads) + " value heads (of " + std::to_string(d.Hkv) + ")");
    int64_t mask_stride[4] = {0, 0, 0, 0};
    if (mask) GB_RETURN_IF_ERROR(attention_mask_strides(ctx, kOp, *mask, {d.B, d.H, d.S, d.T}, mask_stride));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, Shape{d.B, d.H, d.S, d.D}));
    if (cached()) return compute_cached(ctx, d, past, *q, *k, *v, mask, mask_stride, *y);
    if (y->numel() == 0) return {};
    if (d.T == 0) {  // no keys: the unfused product over an empty axis is zeros
      std::fill_n(y->mutable_data<float>(), y->numel(), 0.f);
      return {};
    }
    kernels::AttentionDesc a = head_major(d, d.T * d.D);
    a.kv_len = d.T;
    a.k_batch = a.v_batch = d.Hkv * d.T * d.D;
    std::copy_n(mask_stride, 4, a.mask_stride);
    kernels::attention_f32(a, q->data<float>(), k->data<float>(), v->data<float>(), mask ? mask->data<float>() : nullptr,
                           y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  bool cached() const { return !cache_k_.empty(); }

  // Cache mode: the past's position count, from the fed past K and V (inputs 8, 9: their shapes only).
  Result<int64_t> past_positions(ComputeContext& ctx, const Shape& fresh) const {
    GB_ASSIGN_OR_RETURN(const Tensor* pk, require_input(ctx, 8, "past K"));
    GB_ASSIGN_OR_RETURN(const Tensor* pv, require_input(ctx, 9, "past V"));
    const Shape& ps = pk->shape();
    if (ps.size() != 4 || ps != pv->shape() || ps[0] != fresh[0] || ps[1] != fresh[1] || ps[3] != fresh[3])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(kOp) + ": past K " + shape_to_string(ps) + " and V " + shape_to_string(pv->shape()) +
                          " do not continue the new keys " + shape_to_string(fresh));
    return ps[2];
  }

  kernels::AttentionDesc head_major(const Dims& d, int64_t kv_head_stride) const {
    kernels::AttentionDesc a;
    a.batch = d.B;
    a.heads = d.H;
    a.q_len = d.S;
    a.head_dim = d.D;
    a.q_row = a.k_row = a.v_row = a.out_row = d.D;
    a.q_head = a.out_head = d.S * d.D;
    a.k_head = a.v_head = kv_head_stride;
    a.q_batch = a.out_batch = d.H * d.S * d.D;
    a.kv_group = d.H / d.Hkv;
    a.scale = scale_;
    return a;
  }

  Status compute_cached(ComputeContext& ctx, const Dims& d, int64_t past, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor* mask, const int64_t* mask_stride, Tensor& y) const;

  float scale_;
  std::string cache_k_, cache_v_;  // cache mode: the past inputs whose bound caches hold the keys and values
};

// The binding's rows fit this run: one per batch row, each row's cached and new positions within the fed past,
// the new tokens and its capacity.
Status check_binding(ComputeContext& ctx, const KvCacheBinding* c, const std::string& input, const Dims& d, int64_t past) {
  if (!c)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": no KV cache is bound to '" + input + "' (the session binds its kv_cache_inputs)",
                    "run with Session::run_bound");
  bool ok = static_cast<int64_t>(c->rows.size()) == d.B && static_cast<int64_t>(c->lengths.size()) == d.B &&
            static_cast<int64_t>(c->fresh.size()) == d.B && static_cast<int64_t>(c->capacities.size()) == d.B;
  for (int64_t b = 0; ok && b < d.B; ++b)
    ok = c->rows[b] && c->lengths[b] >= 0 && c->lengths[b] <= past && c->fresh[b] >= 0 && c->fresh[b] <= d.S &&
         c->lengths[b] + c->fresh[b] <= c->capacities[b];
  if (!ok)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": the KV cache bound to '" + input + "' does not fit this run (batch " +
                        std::to_string(d.B) + ", past " + std::to_string(past) + ", new " + std::to_string(d.S) +
                        "): each row needs a buffer, lengths <= past, fresh <= new and lengths + fresh <= its capacity");
  return {};
}

// Appends row b's new positions (the last fresh[b] of the S new ones) to its buffer, per kv head.
void append_rows(const KvCacheBinding& c, const Dims& d, const float* fresh) {
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t h = 0; h < d.Hkv; ++h)
      std::copy_n(fresh + ((b * d.Hkv + h) * d.S + d.S - c.fresh[b]) * d.D, c.fresh[b] * d.D,
                  c.rows[b] + (h * c.capacities[b] + c.lengths[b]) * d.D);
}

// True when query row `mask` (kv values, cache order; nullptr: no mask) attends to none of the row's cached and
// new positions although the run is padded: every one masked out (<= -10000, as padding and causal masks are).
// Only a padding query of a row with nothing cached yet does; the unfused graph's softmax then spreads over all
// the padded positions, which the cache does not hold.
bool sees_no_cached_key(const float* mask, int64_t kv, bool padded) {
  if (!mask) return padded;
  for (int64_t t = 0; t < kv; ++t)
    if (!(mask[t] <= -1e4f)) return false;
  return true;
}

// Query row s of batch row b over every padded position, as the unfused graph computes it: the fed past's
// P positions (the left padding zero, as the copying session feeds it, then the row's cached ones) and all S new
// ones, padding included, under the full mask row. The result of such a row is padding's own (never a token's),
// but per-tensor dynamic quantization of later layers sees it, so it must be the graph's.
void padded_query(const Dims& d, int64_t past, int64_t b, int64_t s, const KvCacheBinding& ck, const KvCacheBinding& cv,
                  const Tensor& q, const Tensor& k, const Tensor& v, const float* mask_row, int64_t mask_col_stride,
                  float scale, float* out) {
  const int64_t T = past + d.S, len = ck.lengths[b];
  std::vector<float> keys(static_cast<size_t>(T * d.D)), values(keys.size());
  kernels::AttentionDesc a;
  a.q_len = 1;
  a.kv_len = T;
  a.head_dim = a.q_row = a.k_row = a.v_row = a.out_row = d.D;
  a.mask_stride[3] = mask_col_stride;
  a.scale = scale;
  for (int64_t h = 0; h < d.H; ++h) {
    const int64_t g = h / (d.H / d.Hkv);
    for (int64_t t = 0; t < T; ++t) {
      float* kt = keys.data() + t * d.D;
      float* vt = values.data() + t * d.D;
      if (t < past - len) {
        std::fill_n(kt, d.D, 0.f);
        std::fill_n(vt, d.D, 0.f);
      } else if (t < past) {
        std::copy_n(ck.rows[b] + (g * ck.capacities[b] + t - (past - len)) * d.D, d.D, kt);
        std::copy_n(cv.rows[b] + (g * cv.capacities[b] + t - (past - len)) * d.D, d.D, vt);
      } else {
        std::copy_n(k.data<float>() + ((b * d.Hkv + g) * d.S + t - past) * d.D, d.D, kt);
        std::copy_n(v.data<float>() + ((b * d.Hkv + g) * d.S + t - past) * d.D, d.D, vt);
      }
    }
    const int64_t at = ((b * d.H + h) * d.S + s) * d.D;
    kernels::attention_f32(a, q.data<float>() + at, keys.data(), values.data(), mask_row, out + (h * d.S + s) * d.D, nullptr);
  }
}

Status DecoderAttentionOp::compute_cached(ComputeContext& ctx, const Dims& d, int64_t past, const Tensor& q, const Tensor& k,
                                          const Tensor& v, const Tensor* mask, const int64_t* mask_stride, Tensor& y) const {
  KvCacheBinding *ck = ctx.kv_cache(cache_k_), *cv = ctx.kv_cache(cache_v_);
  GB_RETURN_IF_ERROR(check_binding(ctx, ck, cache_k_, d, past));
  GB_RETURN_IF_ERROR(check_binding(ctx, cv, cache_v_, d, past));
  if (ck->capacities != cv->capacities || ck->rows == cv->rows || ck->lengths != cv->lengths || ck->fresh != cv->fresh)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": the caches bound to '" + cache_k_ + "' and '" + cache_v_ +
                        "' must be distinct buffers with the same capacity, lengths and new positions");
  if (mask && mask_stride[1] != 0)
    return op_error(ctx, ErrorCode::kInvalidArgument,
                    std::string(kOp) + ": a per-head mask " + shape_to_string(mask->shape()) + " is not supported with a bound KV cache");
  ++ck->uses;
  ++cv->uses;
  append_rows(*ck, d, k.data<float>());
  append_rows(*cv, d, v.data<float>());
  std::vector<float> row_mask;
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t len = ck->lengths[b], fresh = ck->fresh[b], kv = len + fresh;
    float* out = y.mutable_data<float>() + b * d.H * d.S * d.D;
    if (kv == 0 || d.S == 0) {
      std::fill_n(out, d.H * d.S * d.D, 0.f);
      continue;
    }
    kernels::AttentionDesc a = head_major(d, ck->capacities[b] * d.D);
    a.batch = 1;
    a.kv_len = kv;
    if (mask) {  // the row's columns of the padded [past P | new S] mask, in cache order
      row_mask.resize(static_cast<size_t>(d.S * kv));
      const float* m = mask->data<float>() + b * mask_stride[0];
      for (int64_t s = 0; s < d.S; ++s)
        for (int64_t t = 0; t < kv; ++t) {
          const int64_t col = t < len ? past - len + t : past + d.S - fresh + (t - len);
          row_mask[static_cast<size_t>(s * kv + t)] = m[s * mask_stride[2] + col * mask_stride[3]];
        }
      a.mask_stride[2] = kv;
      a.mask_stride[3] = 1;
    }
    kernels::attention_f32(a, q.data<float>() + b * d.H * d.S * d.D, ck->rows[b], cv->rows[b], mask ? row_mask.data() : nullptr,
                           out, &ctx.pool());
    for (int64_t s = 0; s < d.S; ++s)
      if (sees_no_cached_key(mask ? row_mask.data() + s * kv : nullptr, kv, len < past || fresh < d.S))
        padded_query(d, past, b, s, *ck, *cv, q, k, v, mask ? mask->data<float>() + b * mask_stride[0] + s * mask_stride[2] : nullptr,
                     mask_stride[3], scale_, out);
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Op>> create_internal_DecoderAttention(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"scale", "cache_k", "cache_v"}));
  GB_ASSIGN_OR_RETURN(float scale, attr_float(node, "scale", 1.f));
  GB_ASSIGN_OR_RETURN(std::string cache_k, attr_string(node, "cache_k", ""));
  GB_ASSIGN_OR_RETURN(std::string cache_v, attr_string(node, "cache_v", ""));
  if (cache_k.empty() != cache_v.empty())
    return make_error(ErrorCode::kInvalidModel, "attributes 'cache_k' and 'cache_v' come together",
                      "node '" + node.name + "' (glassbox::DecoderAttention)");
  return std::unique_ptr<Op>(new DecoderAttentionOp(scale, std::move(cache_k), std::move(cache_v)));
}

}  // namespace glassbox::ops
