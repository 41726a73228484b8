// com.microsoft GroupQueryAttention (ONNX Runtime contrib op, since version 1; the attention of
// onnxruntime-genai's builder decoders), as ORT's CPU kernel computes it. Inputs: query [B, S,
// heads * head] (or packed QKV [B, S, (heads + 2 kv_heads) * head] when key and value are absent);
// key, value [B, S, kv_heads * head]; past_key, past_value [B, kv_heads, P, head] (optional);
// seqlens_k int32 [B] = each row's total length - 1; total_sequence_length int32 scalar; cos_cache,
// sin_cache [max_position, rotary_dim / 2] (with do_rotary). Outputs: output [B, S, heads * head];
// present_key, present_value [B, kv_heads, max(total_sequence_length, P), head].
// A "first prompt" (S == total_sequence_length) has no cached rows: positions 0..S-1 (rows of a
// shorter sequence past seqlens_k are right padding). Otherwise row b has seqlens_k[b] + 1 - S cached
// rows and its new tokens take the positions after them. The attention itself is
// kernels/gqa_attention.h. kv_cache_binding's form, glassbox::GroupQueryAttention (cache_k / cache_v),
// appends to the generation session's bound caches and reads them in place instead of writing presents.
// Inputs 9+ (position_ids, attention_bias, head_sink, KV quantization
// scales, QK norms) and the output_qk output are refused by name at load.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/gqa_attention.h"
#include "ops/attr_util.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct GroupQueryAttentionAttrs {
  int64_t num_heads = 0;          // query heads (required)
  int64_t kv_num_heads = 0;       // key/value heads (required), divides num_heads
  float scale = 0.0f;             // 0: 1 / sqrt(head size) (ORT's default)
  float softcap = 0.0f;           // 0: off
  int64_t do_rotary = 0;          // 1: rotate Q and K with cos_cache / sin_cache
  int64_t rotary_interleaved = 0; // 0: pairs (i, i + rotary_dim / 2); 1: pairs (2i, 2i + 1)
  int64_t local_window_size = -1; // -1: off
  int64_t smooth_softmax = 0;     // 1: softmax with an extra zero logit
};

// The sizes read from the inputs and checked against each other.
struct GqaInputs {
  const Tensor *query, *key, *value, *past_key, *past_value, *seqlens_k, *total, *cos, *sin;
  int64_t B = 0, S = 0, head = 0, past_len = 0, total_len = 0;
  bool packed = false;
};

class GroupQueryAttentionOp final : public Op {
 public:
  GroupQueryAttentionOp(GroupQueryAttentionAttrs a, std::string cache_k, std::string cache_v)
      : a_(a), cache_k_(std::move(cache_k)), cache_v_(std::move(cache_v)) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(GqaInputs in, read_inputs(ctx));
    const int64_t N = a_.num_heads, Nkv = a_.kv_num_heads, H = in.head;
    GB_ASSIGN_OR_RETURN(std::vector<int64_t> cached, cached_rows(ctx, in));
    kernels::GqaDims d;
    d.batch = in.B, d.seq = in.S, d.heads = N, d.kv_heads = Nkv, d.head = H, d.past_len = in.past_len;
    d.present_len = std::max(in.total_len, in.past_len);
    for (int64_t b = 0; b < in.B; ++b)
      if (cached[b] + in.S > d.present_len || cached[b] > in.past_len)
        return bad(ctx, "batch row " + std::to_string(b) + ": seqlens_k gives " + std::to_string(cached[b]) +
                            " cached rows, which with " + std::to_string(in.S) + " new tokens do not fit past (" +
                            std::to_string(in.past_len) + ") / present (" + std::to_string(d.present_len) + ")");
    GB_ASSIGN_OR_RETURN(Tensor q, ctx.allocate_scratch(DataType::kFloat32, {in.B, N, in.S, H}));
    GB_ASSIGN_OR_RETURN(Tensor k, ctx.allocate_scratch(DataType::kFloat32, {in.B, Nkv, in.S, H}));
    GB_ASSIGN_OR_RETURN(Tensor v, ctx.allocate_scratch(DataType::kFloat32, {in.B, Nkv, in.S, H}));
    const int64_t row_heads = in.packed ? N + 2 * Nkv : N;
    GB_RETURN_IF_ERROR(split_heads(ctx, in, in.query, row_heads, 0, N, cached, a_.do_rotary != 0, q.mutable_data<float>()));
    if (in.packed) {
      GB_RETURN_IF_ERROR(split_heads(ctx, in, in.query, row_heads, N, Nkv, cached, a_.do_rotary != 0, k.mutable_data<float>()));
      GB_RETURN_IF_ERROR(split_heads(ctx, in, in.query, row_heads, N + Nkv, Nkv, cached, false, v.mutable_data<float>()));
    } else {
      GB_RETURN_IF_ERROR(split_heads(ctx, in, in.key, Nkv, 0, Nkv, cached, a_.do_rotary != 0, k.mutable_data<float>()));
      GB_RETURN_IF_ERROR(split_heads(ctx, in, in.value, Nkv, 0, Nkv, cached, false, v.mutable_data<float>()));
    }
    GB_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kFloat32, {in.B, in.S, N * H}));
    kernels::GqaScoring sc;
    sc.scale = a_.scale != 0.0f ? a_.scale : 1.0f / std::sqrt(static_cast<float>(H));
    sc.softcap = a_.softcap, sc.local_window = a_.local_window_size, sc.smooth_softmax = a_.smooth_softmax != 0;
    if (!cache_k_.empty()) return compute_bound(ctx, d, sc, cached, q, k, v, *out);
    GB_ASSIGN_OR_RETURN(Tensor * pk, ctx.allocate_output(1, DataType::kFloat32, {in.B, Nkv, d.present_len, H}));
    GB_ASSIGN_OR_RETURN(Tensor * pv, ctx.allocate_output(2, DataType::kFloat32, {in.B, Nkv, d.present_len, H}));
    kernels::gqa_attention_f32(d, sc, q.data<float>(), k.data<float>(), v.data<float>(),
                               in.past_key ? in.past_key->data<float>() : nullptr,
                               in.past_value ? in.past_value->data<float>() : nullptr, cached.data(),
                               pk->mutable_data<float>(), pv->mutable_data<float>(), out->mutable_data<float>(), &ctx.pool());
    return Status::ok_status();
  }

 private:
  static Error bad(const ComputeContext& ctx, const std::string& what) {
    return nn::node_error(ctx, ErrorCode::kInvalidArgument, "GroupQueryAttention: " + what);
  }

  Result<GqaInputs> read_inputs(const ComputeContext& ctx) const {
    GqaInputs in{};
    GB_ASSIGN_OR_RETURN(in.query, nn::need_input(ctx, 0, "query"));
    in.key = ctx.input(1), in.value = ctx.input(2), in.past_key = ctx.input(3), in.past_value = ctx.input(4);
    GB_ASSIGN_OR_RETURN(in.seqlens_k, nn::need_input(ctx, 5, "seqlens_k"));
    GB_ASSIGN_OR_RETURN(in.total, nn::need_input(ctx, 6, "total_sequence_length"));
    in.cos = ctx.input(7), in.sin = ctx.input(8);
    for (const Tensor* t : {in.query, in.key, in.value, in.past_key, in.past_value, in.cos, in.sin})
      if (t) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *t, "query/key/value/past/cos/sin"));
    if (in.seqlens_k->dtype() != DataType::kInt32 || in.total->dtype() != DataType::kInt32 || in.total->numel() != 1)
      return bad(ctx, "seqlens_k must be int32 [batch] and total_sequence_length an int32 scalar");
    if (in.query->rank() != 3) return bad(ctx, "query must be [batch, seq, hidden], got " + shape_to_string(in.query->shape()));
    in.B = in.query->shape()[0], in.S = in.query->shape()[1];
    const int64_t D = in.query->shape()[2], N = a_.num_heads, Nkv = a_.kv_num_heads;
    if ((in.key == nullptr) != (in.value == nullptr)) return bad(ctx, "key and value must be given together");
    in.packed = in.key == nullptr;
    const int64_t row_heads = in.packed ? N + 2 * Nkv : N;
    if (D % row_heads != 0) return bad(ctx, "query's last dim " + std::to_string(D) + " is not a multiple of " + std::to_string(row_heads) + " heads");
    in.head = D / row_heads;
    const Shape kv_shape{in.B, in.S, Nkv * in.head};
    if (!in.packed && (in.key->shape() != kv_shape || in.value->shape() != kv_shape))
      return bad(ctx, "key and value must be " + shape_to_string(kv_shape) + ", got " + shape_to_string(in.key->shape()) +
                          " and " + shape_to_string(in.value->shape()));
    if ((in.past_key == nullptr) != (in.past_value == nullptr)) return bad(ctx, "past_key and past_value must be given together");
    if (in.past_key) {
      const Shape& ps = in.past_key->shape();
      if (ps.size() != 4 || ps[0] != in.B || ps[1] != Nkv || ps[3] != in.head || in.past_value->shape() != ps)
        return bad(ctx, "past_key and past_value must be [batch, kv_num_heads, past, head] = [" + std::to_string(in.B) + ", " +
                            std::to_string(Nkv) + ", P, " + std::to_string(in.head) + "], got " + shape_to_string(ps) + " and " +
                            shape_to_string(in.past_value->shape()));
      in.past_len = ps[2];
    }
    if (in.seqlens_k->shape() != Shape{in.B}) return bad(ctx, "seqlens_k must be [" + std::to_string(in.B) + "]");
    in.total_len = in.total->data<int32_t>()[0];
    if (in.total_len < in.S) return bad(ctx, "total_sequence_length " + std::to_string(in.total_len) + " is less than the new tokens " + std::to_string(in.S));
    if (a_.do_rotary) {
      if (!in.cos || !in.sin) return bad(ctx, "do_rotary = 1 needs cos_cache and sin_cache");
      if (in.cos->rank() != 2 || in.cos->shape() != in.sin->shape() || 2 * in.cos->shape()[1] > in.head)
        return bad(ctx, "cos_cache and sin_cache must be equal [max_position, rotary_dim / 2] with rotary_dim <= head " +
                            std::to_string(in.head) + ", got " + shape_to_string(in.cos->shape()));
    }
    return in;
  }

  // Cached rows per batch row: 0 on a first prompt (S == total_sequence_length), else seqlens_k[b] + 1 - S.
  Result<std::vector<int64_t>> cached_rows(const ComputeContext& ctx, const GqaInputs& in) const {
    std::vector<int64_t> cached(static_cast<size_t>(in.B), 0);
    const int32_t* sk = in.seqlens_k->data<int32_t>();
    for (int64_t b = 0; b < in.B; ++b) {
      const int64_t total_b = static_cast<int64_t>(sk[b]) + 1;
      if (total_b < 1 || total_b > in.total_len)
        return bad(ctx, "seqlens_k[" + std::to_string(b) + "] = " + std::to_string(sk[b]) + " must lie in [0, total_sequence_length - 1 = " +
                            std::to_string(in.total_len - 1) + "]");
      const bool first_prompt = in.S == in.total_len;
      if (!first_prompt && total_b < in.S)
        return bad(ctx, "seqlens_k[" + std::to_string(b) + "] + 1 = " + std::to_string(total_b) + " is less than the new tokens " + std::to_string(in.S));
      cached[b] = first_prompt ? 0 : total_b - in.S;
    }
    return cached;
  }

  // Heads [first, first + count) of each row of `src` ([B, S, row_heads * head]) into dst [B, count, S, head],
  // rotated by position (cached[b] + s) when `rotate`.
  Status split_heads(const ComputeContext& ctx, const GqaInputs& in, const Tensor* src, int64_t row_heads, int64_t first,
                     int64_t count, const std::vector<int64_t>& cached, bool rotate, float* dst) const {
    const int64_t H = in.head, half = rotate ? in.cos->shape()[1] : 0, max_pos = rotate ? in.cos->shape()[0] : 0;
    const float* x = src->data<float>();
    for (int64_t b = 0; b < in.B; ++b)
      for (int64_t s = 0; s < in.S; ++s) {
        const int64_t pos = cached[b] + s;
        if (rotate && pos >= max_pos)
          return bad(ctx, "position " + std::to_string(pos) + " is outside cos_cache's " + std::to_string(max_pos) + " rows");
        for (int64_t h = 0; h < count; ++h) {
          const float* xr = x + ((b * in.S + s) * row_heads + first + h) * H;
          float* yr = dst + ((b * count + h) * in.S + s) * H;
          if (!rotate) {
            std::copy(xr, xr + H, yr);
            continue;
          }
          const float* c = in.cos->data<float>() + pos * half;
          const float* sn = in.sin->data<float>() + pos * half;
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = a_.rotary_interleaved ? 2 * i : i, i2 = a_.rotary_interleaved ? 2 * i + 1 : i + half;
            yr[i1] = xr[i1] * c[i] - xr[i2] * sn[i];
            yr[i2] = xr[i2] * c[i] + xr[i1] * sn[i];
          }
          std::copy(xr + 2 * half, xr + H, yr + 2 * half);
        }
      }
    return Status::ok_status();
  }

  // kv_cache_binding's form (glassbox::GroupQueryAttention): the past inputs are read for their shape; row b's
  // seqlens_k-given cached rows are the bound cache's lengths[b], its S new rotated keys/values are appended to the
  // cache and the attention reads the cache in place. No presents are written.
  Status compute_bound(ComputeContext& ctx, kernels::GqaDims d, const kernels::GqaScoring& sc, const std::vector<int64_t>& cached,
                       const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out) const {
    KvCacheBinding *ck = ctx.kv_cache(cache_k_), *cv = ctx.kv_cache(cache_v_);
    GB_RETURN_IF_ERROR(check_binding(ctx, ck, cache_k_, d, cached));
    GB_RETURN_IF_ERROR(check_binding(ctx, cv, cache_v_, d, cached));
    if (ck->capacities != cv->capacities || ck->rows == cv->rows)
      return bad(ctx, "the caches bound to '" + cache_k_ + "' and '" + cache_v_ + "' must be distinct buffers with the same capacities");
    ++ck->uses;
    ++cv->uses;
    const int64_t S = d.seq, H = d.head;
    d.present_len = 0;
    for (int64_t b = 0; b < d.batch; ++b) {
      d.present_len = std::max(d.present_len, cached[b] + S);
      for (int64_t g = 0; g < d.kv_heads; ++g) {
        const int64_t from = (b * d.kv_heads + g) * S * H, to = (g * ck->capacities[b] + cached[b]) * H;
        std::copy_n(k.data<float>() + from, S * H, ck->rows[b] + to);
        std::copy_n(v.data<float>() + from, S * H, cv->rows[b] + to);
      }
    }
    std::vector<const float*> krows(ck->rows.begin(), ck->rows.end()), vrows(cv->rows.begin(), cv->rows.end());
    kernels::gqa_attention_cached_f32(d, sc, q.data<float>(), krows.data(), vrows.data(), ck->capacities.data(), cached.data(),
                                      out.mutable_data<float>(), &ctx.pool());
    return Status::ok_status();
  }

  // The binding fits this run: a buffer per batch row holding seqlens_k's cached rows (lengths[b]) and room for
  // all S new ones (fresh[b] == S: GroupQueryAttention appends every new position).
  static Status check_binding(ComputeContext& ctx, const KvCacheBinding* c, const std::string& input, const kernels::GqaDims& d,
                              const std::vector<int64_t>& cached) {
    if (!c) return bad(ctx, "no KV cache is bound to '" + input + "' (the session binds its kv_cache_inputs; run with Session::run_bound)");
    bool ok = static_cast<int64_t>(c->rows.size()) == d.batch && static_cast<int64_t>(c->lengths.size()) == d.batch &&
              static_cast<int64_t>(c->fresh.size()) == d.batch && static_cast<int64_t>(c->capacities.size()) == d.batch;
    for (int64_t b = 0; ok && b < d.batch; ++b)
      ok = c->rows[b] && c->lengths[b] == cached[b] && c->fresh[b] == d.seq && cached[b] + d.seq <= c->capacities[b];
    if (!ok)
      return bad(ctx, "the KV cache bound to '" + input + "' does not fit this run (batch " + std::to_string(d.batch) + ", new " +
                          std::to_string(d.seq) + "): each row needs a buffer, lengths equal to seqlens_k's cached rows, fresh "
                          "equal to the new tokens and lengths + fresh <= its capacity");
    return Status::ok_status();
  }

  GroupQueryAttentionAttrs a_;
  std::string cache_k_, cache_v_;  // bound form: the past inputs whose caches hold the keys and values
};

// ORT 1.30's inputs past the ones implemented, by index: each is refused by name when given.
constexpr const char* kUnimplementedInputs[] = {"position_ids", "attention_bias", "head_sink", "k_scale",
                                                "v_scale", "q_norm_weight", "k_norm_weight"};

Result<std::unique_ptr<Op>> create(const graph::Node& node, std::string cache_k, std::string cache_v) {
  GroupQueryAttentionAttrs a;
  GB_ASSIGN_OR_RETURN(a.num_heads, attr_int_required(node, "num_heads"));
  GB_ASSIGN_OR_RETURN(a.kv_num_heads, attr_int_required(node, "kv_num_heads"));
  GB_ASSIGN_OR_RETURN(a.scale, attr_float(node, "scale", 0.0f));
  GB_ASSIGN_OR_RETURN(a.softcap, attr_float(node, "softcap", 0.0f));
  GB_ASSIGN_OR_RETURN(a.do_rotary, attr_int(node, "do_rotary", 0));
  GB_ASSIGN_OR_RETURN(a.rotary_interleaved, attr_int(node, "rotary_interleaved", 0));
  GB_ASSIGN_OR_RETURN(a.local_window_size, attr_int(node, "local_window_size", -1));
  GB_ASSIGN_OR_RETURN(a.smooth_softmax, attr_int(node, "smooth_softmax", 0));
  if (a.num_heads <= 0 || a.kv_num_heads <= 0 || a.num_heads % a.kv_num_heads != 0)
    return make_error(ErrorCode::kInvalidModel, "num_heads " + std::to_string(a.num_heads) + " must be a positive multiple of kv_num_heads " +
                                                    std::to_string(a.kv_num_heads));
  for (auto [name, v] : {std::pair{"do_rotary", a.do_rotary}, {"rotary_interleaved", a.rotary_interleaved}, {"smooth_softmax", a.smooth_softmax}})
    if (v != 0 && v != 1) return unsupported_attr(name, std::to_string(v) + "; 0 or 1");
  if (a.softcap < 0.0f) return unsupported_attr("softcap", std::to_string(a.softcap) + "; must be >= 0");
  for (size_t i = 9; i < node.inputs.size(); ++i)
    if (!node.inputs[i].empty())
      return make_error(ErrorCode::kUnsupported,
                        std::string("input '") + (i - 9 < std::size(kUnimplementedInputs) ? kUnimplementedInputs[i - 9] : "?") +
                            "' (index " + std::to_string(i) + ") is not implemented", {},
                        "leave it empty, as onnxruntime-genai's builder does for CPU fp32 decoders");
  if (node.outputs.size() > 3 && !node.outputs[3].empty())
    return make_error(ErrorCode::kUnsupported, "output 'output_qk' is not implemented", {}, "leave output 3 empty");
  if (node.outputs.size() < 3 && cache_k.empty())
    return make_error(ErrorCode::kInvalidModel, "GroupQueryAttention needs outputs output, present_key and present_value");
  return std::unique_ptr<Op>(new GroupQueryAttentionOp(a, std::move(cache_k), std::move(cache_v)));
}

}  // namespace

Result<std::unique_ptr<Op>> create_ms_GroupQueryAttention(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"num_heads", "kv_num_heads", "scale", "softcap", "do_rotary", "rotary_interleaved",
                                              "local_window_size", "smooth_softmax"}));
  return create(node, "", "");
}

// kv_cache_binding's form: the contrib op's attributes plus cache_k / cache_v, the past inputs whose bound caches it
// reads and appends to.
Result<std::unique_ptr<Op>> create_internal_GroupQueryAttention(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"num_heads", "kv_num_heads", "scale", "softcap", "do_rotary", "rotary_interleaved",
                                              "local_window_size", "smooth_softmax", "cache_k", "cache_v"}));
  GB_ASSIGN_OR_RETURN(std::string cache_k, attr_string(node, "cache_k", ""));
  GB_ASSIGN_OR_RETURN(std::string cache_v, attr_string(node, "cache_v", ""));
  if (cache_k.empty() || cache_v.empty())
    return make_error(ErrorCode::kInvalidModel, "attributes 'cache_k' and 'cache_v' are required", "node '" + node.name + "' (glassbox::GroupQueryAttention)");
  return create(node, std::move(cache_k), std::move(cache_v));
}

}  // namespace glassbox::ops
