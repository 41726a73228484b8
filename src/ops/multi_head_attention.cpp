// glassbox::MultiHeadAttention (internal, made by the attention_fusion pass): the encoder
// self-attention block as torch.onnx writes it, from the Q/K/V projections to the
// context before its output projection:
//   Y = Transpose(MatMul(Softmax(MatMul(Tq(Reshape(Q)), Tk(Reshape(K))) * scale + mask), Tv(Reshape(V))))
// Attributes q_shape / k_shape / v_shape are the three Reshape targets [batch, tokens,
// heads, head_dim], where a 0 batch or token count copies the input's dim (Reshape's
// meaning of 0); Q, K, V are float32 with those element counts, read in place as
// token-major rows. mask (optional) broadcasts
// to [batch, heads, q_tokens, kv_tokens]. Y is [batch, q_tokens, heads, head_dim].
// Attribute packed_qkv = 1 (set by the qkv_projection_fusion pass): input 0 holds Q, K and V
// side by side, [..., 3 * heads * head_dim] (the fused projection's output), inputs 1 and 2
// are absent; each of Q, K, V is a column range of those rows, read in place (row stride
// 3 * heads * head_dim), and its Reshape target applies to the input's shape with the last
// dim divided by 3 (what each projection alone would have produced).
#include <vector>

#include "kernels/attention.h"
#include "ops/attention_mask.h"
#include "ops/attr_util.h"

namespace glassbox::ops {
namespace {

int64_t product(const Shape& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

class MultiHeadAttentionOp final : public Op {
 public:
  MultiHeadAttentionOp(std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v, float scale, bool packed)
      : q_(std::move(q)), k_(std::move(k)), v_(std::move(v)), scale_(scale), packed_(packed) {}

  Status compute(ComputeContext& ctx) const override {
    const Tensor* ins[3];
    GB_ASSIGN_OR_RETURN(ins[0], require_input(ctx, 0, packed_ ? "QKV" : "Q"));
    if (packed_) {
      ins[1] = ins[2] = ins[0];
    } else {
      GB_ASSIGN_OR_RETURN(ins[1], require_input(ctx, 1, "K"));
      GB_ASSIGN_OR_RETURN(ins[2], require_input(ctx, 2, "V"));
    }
    const Tensor* mask = ctx.input(3);
    for (const Tensor* t : {ins[0], ins[1], ins[2], mask})
      if (t && t->dtype() != DataType::kFloat32) return op_error(ctx, ErrorCode::kInternal, "MultiHeadAttention expects float32");
    const int64_t hd = q_[2] * q_[3];
    Shape part = ins[0]->shape();  // the shape each of Q, K, V has on its own
    if (packed_) {
      if (part.empty() || part.back() != 3 * hd)
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        "MultiHeadAttention: packed QKV " + shape_to_string(part) + " must end in 3 x " +
                            std::to_string(q_[2]) + " heads x " + std::to_string(q_[3]));
      part.back() = hd;
    }
    const char* names[] = {"Q", "K", "V"};
    const std::vector<int64_t>* targets[] = {&q_, &k_, &v_};
    std::vector<int64_t> dims[3];
    for (int i = 0; i < 3; ++i) {
      const Shape& shape = packed_ ? part : ins[i]->shape();
      dims[i] = *targets[i];
      bool ok = true;
      for (size_t a = 0; a < 2; ++a)
        if (dims[i][a] == 0) {
          ok = ok && shape.size() > a;
          dims[i][a] = ok ? shape[a] : 0;
        }
      if (!ok || product(shape) != product(dims[i]))
        return op_error(ctx, ErrorCode::kInvalidArgument,
                        std::string("MultiHeadAttention: ") + names[i] + " " + shape_to_string(shape) +
                            " cannot be reshaped to " + shape_to_string(*targets[i]));
    }
    if (dims[0][0] != dims[1][0] || dims[1] != dims[2])
      return op_error(ctx, ErrorCode::kInvalidArgument,
                      "MultiHeadAttention: Q " + shape_to_string(dims[0]) + ", K " + shape_to_string(dims[1]) + " and V " +
                          shape_to_string(dims[2]) + " disagree on batch or key/value tokens");
    const int64_t B = dims[0][0], Sq = dims[0][1], H = q_[2], D = q_[3], Skv = dims[1][1];
    kernels::AttentionDesc d;
    d.batch = B;
    d.heads = H;
    d.q_len = Sq;
    d.kv_len = Skv;
    d.head_dim = D;
    const int64_t row = packed_ ? 3 * H * D : H * D;  // input rows; the output's are H * D
    d.q_row = d.k_row = d.v_row = row;
    d.out_row = H * D;
    d.q_batch = Sq * row;
    d.k_batch = d.v_batch = Skv * row;
    d.out_batch = Sq * H * D;
    d.scale = scale_;
    if (mask) GB_RETURN_IF_ERROR(attention_mask_strides(ctx, "MultiHeadAttention", *mask, {B, H, Sq, Skv}, d.mask_stride));
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, Shape{B, Sq, H, D}));
    if (y->numel() == 0) return {};
    // Packed: K and V start H * D and 2 * H * D columns into each row.
    const float* q = ins[0]->data<float>();
    const float* k = packed_ ? q + H * D : ins[1]->data<float>();
    const float* v = packed_ ? q + 2 * H * D : ins[2]->data<float>();
    kernels::attention_f32(d, q, k, v, mask ? mask->data<float>() : nullptr, y->mutable_data<float>(), &ctx.pool());
    return {};
  }

 private:
  std::vector<int64_t> q_, k_, v_;
  float scale_;
  bool packed_;  // packed_qkv: Q, K, V are column ranges of input 0
};

Result<std::vector<int64_t>> shape_attr(const graph::Node& node, const char* name) {
  const graph::Attribute* a = node.attr(name);
  bool ok = a && a->type == graph::AttrType::kInts && a->ints.size() == 4;
  for (size_t i = 0; ok && i < 4; ++i) ok = a->ints[i] >= 0;
  if (!ok)
    return make_error(ErrorCode::kInvalidModel, std::string("attribute '") + name + "' must hold 4 non-negative dims",
                      "node '" + node.name + "' (glassbox::MultiHeadAttention)");
  return a->ints;
}

}  // namespace

Result<std::unique_ptr<Op>> create_internal_MultiHeadAttention(const graph::Node& node) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"q_shape", "k_shape", "v_shape", "scale", "packed_qkv"}));
  GB_ASSIGN_OR_RETURN(auto q, shape_attr(node, "q_shape"));
  GB_ASSIGN_OR_RETURN(auto k, shape_attr(node, "k_shape"));
  GB_ASSIGN_OR_RETURN(auto v, shape_attr(node, "v_shape"));
  if (q[2] != k[2] || q[3] != k[3] || k[2] != v[2] || k[3] != v[3] || q[2] == 0 || q[3] == 0)
    return make_error(ErrorCode::kInvalidModel, "q_shape, k_shape and v_shape disagree on heads or head_dim (or one is 0)",
                      "node '" + node.name + "' (glassbox::MultiHeadAttention)");
  GB_ASSIGN_OR_RETURN(float scale, attr_float(node, "scale", 1.f));
  GB_ASSIGN_OR_RETURN(int64_t packed, attr_int(node, "packed_qkv", 0));
  if (packed != 0 && packed != 1)
    return make_error(ErrorCode::kInvalidModel, "attribute 'packed_qkv' must be 0 or 1, not " + std::to_string(packed),
                      "node '" + node.name + "' (glassbox::MultiHeadAttention)");
  return std::unique_ptr<Op>(new MultiHeadAttentionOp(std::move(q), std::move(k), std::move(v), scale, packed == 1));
}

}  // namespace glassbox::ops
