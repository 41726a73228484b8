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

class DecoderAttentionOp final : public Op {
 public:
  explicit DecoderAttentionOp(float scale) : scale_(scale) {}

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* q, require_input(ctx, 0, "Q"));
    GB_ASSIGN_OR_RETURN(const Tensor* k, require_input(ctx, 1, "K"));
    GB_ASSIGN_OR_RETURN(const Tensor* v, require_input(ctx, 2, "V"));
    const Tensor* mask = ctx.input(3);
    for (const Tensor* t : {q, k, v, mask})
      if (t && t->dtype() != DataType::kFloat32) return op_error(ctx, ErrorCode::kInternal, std::string(kOp) + " expects float32");
    const Shape &qs = q->shape(), &ks = k->shape(), &vs = v->shape();
    if (qs.size() != 4 || ks.size() != 4 || ks != vs || qs[0] != ks[0] || qs[3] != ks[3])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(kOp) + ": Q " + shape_to_string(qs) + ", K " + shape_to_string(ks) + " and V " +
                          shape_to_string(vs) + " must be [batch, heads, tokens, head_dim] with one batch, head_dim and K = V");
    const int64_t B = qs[0], H = qs[1], S = qs[2], D = qs[3], Hkv = ks[1], T = ks[2];
    GB_ASSIGN_OR_RETURN(int64_t k_heads, repeated_heads(ctx, ks, 4, "K"));
    GB_ASSIGN_OR_RETURN(int64_t v_heads, repeated_heads(ctx, vs, 6, "V"));
    // MatMul broadcasts a single (repeated) head to all query heads; otherwise the counts must agree.
    if ((k_heads != H && k_heads != 1) || (v_heads != H && v_heads != 1) || Hkv == 0 || H % Hkv != 0)
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      std::string(kOp) + ": " + std::to_string(H) + " query heads cannot read " + std::to_string(k_heads) +
                          " key and " + std::to_string(v_heads) + " value heads (of " + std::to_string(Hkv) + ")");
    kernels::AttentionDesc d;
    d.batch = B;
    d.heads = H;
    d.q_len = S;
    d.kv_len = T;
    d.head_dim = D;
    d.q_row = d.k_row = d.v_row = d.out_row = D;
    d.q_head = d.out_head = S * D;
    d.k_head = d.v_head = T * D;
    d.q_batch = d.out_batch = H * S * D;
    d.k_batch = d.v_batch = Hkv * T * D;
    d.kv_group = H / Hkv;
    d.scale = scale_;
    if (mask) GB_RETURN_IF_ERROR(attention_mask_strides(ctx, kOp, *mask, {B, H, S, T}, d.mask_stride));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, Shape{B, H, S, D}));
    if (y->numel() == 0) return {};
    if (T == 0) {  // no keys: the unfused product over an empty axis is zeros
      std::fill_n(y->mutable_data<float>(), y->numel(), 0.f);
      return {};
    }
    kernels::attention_f32(d, q->data<float>(), k->data<float>(), v->data<float>(), mask ? mask->data<float>() : nullptr,
                           y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  float scale_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_internal_DecoderAttention(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"scale"}));
  GB_ASSIGN_OR_RETURN(float scale, attr_float(node, "scale", 1.f));
  return std::unique_ptr<Op>(new DecoderAttentionOp(scale));
}

}  // namespace glassbox::ops
