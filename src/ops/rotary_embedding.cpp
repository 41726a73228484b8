// com.microsoft RotaryEmbedding (ONNX Runtime contrib op, since version 1; onnxruntime-genai's and
// ORT's fused decoders): rotates the first rotary_dim values of each head by the angle of its
// position, cos/sin read from caches [max_position, rotary_dim / 2]. Inputs (in this order, unlike
// ai.onnx RotaryEmbedding-23): input [batch, seq, hidden] or [batch, heads, seq, head_size];
// position_ids int64 [batch, seq], or [1] = the first position (then position = it + s);
// cos_cache; sin_cache. interleaved 0: pairs (i, i + rotary_dim / 2); 1: pairs (2i, 2i + 1).
// Values past rotary_dim pass through. is_packed_batching is refused.
#include <algorithm>

#include "ops/attr_util.h"
#include "ops/nn_args.h"

namespace glassbox::ops {
namespace {

struct RotaryEmbeddingAttrs {
  int64_t interleaved = 0;           // 0: rotate halves; 1: rotate adjacent pairs
  int64_t num_heads = 0;             // needed for 3-D input when rotary_embedding_dim < head_size
  int64_t rotary_embedding_dim = 0;  // 0: the whole head (2 x cos_cache's last dim)
  float scale = 1.0f;                // ORT's schema has it; its CPU kernel does not use it: only 1.0 accepted
};

class RotaryEmbeddingOp final : public Op {
 public:
  explicit RotaryEmbeddingOp(RotaryEmbeddingAttrs a) : a_(a) {}
  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* x, nn::need_input(ctx, 0, "input"));
    GB_ASSIGN_OR_RETURN(const Tensor* pos, nn::need_input(ctx, 1, "position_ids"));
    GB_ASSIGN_OR_RETURN(const Tensor* cos, nn::need_input(ctx, 2, "cos_cache"));
    GB_ASSIGN_OR_RETURN(const Tensor* sin, nn::need_input(ctx, 3, "sin_cache"));
    for (const Tensor* t : {x, cos, sin}) GB_RETURN_IF_ERROR(nn::need_float32(ctx, *t, "input/cos_cache/sin_cache"));
    auto bad = [&](const std::string& what) { return nn::node_error(ctx, ErrorCode::kInvalidArgument, what); };
    if (pos->dtype() != DataType::kInt64) return bad("position_ids must be int64");
    if ((x->rank() != 3 && x->rank() != 4) || cos->rank() != 2 || cos->shape() != sin->shape())
      return bad("input must be 3-D or 4-D and cos_cache/sin_cache equal 2-D, got " + shape_to_string(x->shape()) + ", " +
                 shape_to_string(cos->shape()) + ", " + shape_to_string(sin->shape()));
    const bool bnsh = x->rank() == 4;
    const int64_t B = x->shape()[0], S = x->shape()[bnsh ? 2 : 1], half_max = cos->shape()[1], max_pos = cos->shape()[0];
    const int64_t rot = a_.rotary_embedding_dim > 0 ? a_.rotary_embedding_dim : 2 * half_max;
    const int64_t head = bnsh ? x->shape()[3] : (a_.num_heads > 0 ? x->shape()[2] / a_.num_heads : rot);
    const int64_t heads = bnsh ? x->shape()[1] : x->shape()[2] / std::max<int64_t>(head, 1);
    if (head <= 0 || rot > head || rot % 2 != 0 || rot / 2 > half_max || (!bnsh && heads * head != x->shape()[2]))
      return bad("head size " + std::to_string(head) + " and rotary_embedding_dim " + std::to_string(rot) +
                 " do not fit input " + shape_to_string(x->shape()) + " and cos_cache " + shape_to_string(cos->shape()));
    const bool start_only = pos->numel() == 1;
    if (!start_only && pos->shape() != Shape{B, S}) return bad("position_ids must be [batch, seq] or [1]");
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, x->shape()));
    const float* px = x->data<float>();
    float* py = y->mutable_data<float>();
    const int64_t half = rot / 2;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t p = start_only ? pos->data<int64_t>()[0] + s : pos->data<int64_t>()[b * S + s];
        if (p < 0 || p >= max_pos) return bad("position " + std::to_string(p) + " is outside cos_cache's " + std::to_string(max_pos));
        const float* c = cos->data<float>() + p * half_max;
        const float* sn = sin->data<float>() + p * half_max;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t off = bnsh ? ((b * heads + h) * S + s) * head : (b * S + s) * heads * head + h * head;
          rotate(px + off, py + off, c, sn, half, head);
        }
      }
    return Status::ok_status();
  }

 private:
  void rotate(const float* x, float* y, const float* c, const float* s, int64_t half, int64_t head) const {
    for (int64_t i = 0; i < half; ++i) {
      const int64_t i1 = a_.interleaved ? 2 * i : i, i2 = a_.interleaved ? 2 * i + 1 : i + half;
      y[i1] = x[i1] * c[i] - x[i2] * s[i];
      y[i2] = x[i2] * c[i] + x[i1] * s[i];
    }
    for (int64_t i = 2 * half; i < head; ++i) y[i] = x[i];
  }

  RotaryEmbeddingAttrs a_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ms_RotaryEmbedding(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"interleaved", "is_packed_batching", "num_heads", "rotary_embedding_dim", "scale"}));
  RotaryEmbeddingAttrs a;
  GB_ASSIGN_OR_RETURN(a.interleaved, attr_int(node, "interleaved", 0));
  GB_ASSIGN_OR_RETURN(int64_t packed, attr_int(node, "is_packed_batching", 0));
  GB_ASSIGN_OR_RETURN(a.num_heads, attr_int(node, "num_heads", 0));
  GB_ASSIGN_OR_RETURN(a.rotary_embedding_dim, attr_int(node, "rotary_embedding_dim", 0));
  GB_ASSIGN_OR_RETURN(a.scale, attr_float(node, "scale", 1.0f));
  if (packed != 0) return unsupported_attr("is_packed_batching", "1 (packed sequences); only 0 is implemented");
  if (a.scale != 1.0f) return unsupported_attr("scale", std::to_string(a.scale) + "; only 1.0 is implemented");
  if (a.interleaved != 0 && a.interleaved != 1) return unsupported_attr("interleaved", std::to_string(a.interleaved));
  if (a.rotary_embedding_dim > 0 && a.num_heads == 0)
    return make_error(ErrorCode::kInvalidModel, "rotary_embedding_dim needs num_heads (ORT's rule)");
  return std::unique_ptr<Op>(new RotaryEmbeddingOp(a));
}

}  // namespace glassbox::ops
