// com.microsoft MatMulNBits (ONNX Runtime contrib op, since version 1): Y = A x dequant(B)^T (+ bias),
// B block-quantized along K: dequant(b) = (b - zero_point) * scale per block of block_size values.
//   A [..., K] float; B uint8 [N, k_blocks, blob] with k_blocks = ceil(K / block_size) and
//   blob = block_size * bits / 8, codes packed along K low bits first; scales float, N * k_blocks
//   values ([N, k_blocks] or flattened, as older quantizers wrote); zero_points optional: packed
//   uint8 (N * ceil(k_blocks * bits / 8)) or float (N * k_blocks), default 2^(bits - 1);
//   g_idx (deprecated) refused; bias [N] optional.
// accuracy_level (0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8): at 4 glassbox quantizes A to int8 per block
// as ORT's CPU kernel does (kernels/matmul_nbits.h NBitsInt8Activations) and multiplies in int32; at 0-3
// B is dequantized and multiplied in fp32 (fp16 and bf16 are GPU hints). Declared in explain. Kernels (kernels/matmul_nbits.h): up to kNBitsDirectMaxRows rows of A (decode
// steps) multiply straight from the packed codes, decoded in registers (AVX-512 / AVX2); more rows
// (prefill) decode tiles of 64 weight rows to fp32 scratch and run the fp32 GEMM on them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/matmul_nbits.h"
#include "ops/attr_util.h"
#include "ops/elementwise.h"

namespace glassbox::ops {
namespace {

struct MatMulNBitsAttrs {
  int64_t K = 0;               // required: A's last dim
  int64_t N = 0;               // required: Y's last dim
  int64_t bits = 4;            // 4 or 8 here (ORT also has 2)
  int64_t block_size = 0;      // required: a power of two >= 16
  int64_t accuracy_level = 0;  // ORT's compute precision hint; glassbox honours 4 (int8 A), else fp32
};

constexpr int64_t kTileColumns = 64;     // weight rows decoded per GEMM tile (many rows of A)
constexpr int64_t kDirectRowsPerTask = 16;  // weight rows per pool task on the direct path (few rows of A)

const char* accuracy_name(int64_t level) {
  switch (level) {
    case 0: return "unset";
    case 1: return "fp32";
    case 2: return "fp16";
    case 3: return "bf16";
    case 4: return "int8 (ORT's CPU kernel quantizes A to int8 per block)";
  }
  return "unknown";
}

class MatMulNBitsOp final : public Op {
 public:
  explicit MatMulNBitsOp(MatMulNBitsAttrs a) : a_(a), k_blocks_((a.K + a.block_size - 1) / a.block_size) {}

  std::string load_decision() const override {
    const std::string head = "MatMulNBits bits " + std::to_string(a_.bits) + ", block_size " + std::to_string(a_.block_size) +
                             ", accuracy_level " + std::to_string(a_.accuracy_level) + " (" + accuracy_name(a_.accuracy_level) + "): ";
    if (a_.accuracy_level == 4)
      return head + "glassbox honours it: A quantized to int8 per block (symmetric, max|a|/127, round to nearest even, as "
                    "ORT's CPU kernel), int32 dot products with the codes (" +
             std::string(kernels::nbits_int8_vnni_available() ? "AVX-512 VNNI" : "scalar loop: this CPU lacks AVX-512 VNNI") +
             "), scaled per block in fp32";
    return head + "glassbox dequantizes B and computes in fp32 (levels 0-3; level 4 would quantize A to int8)";
  }

  Status compute(ComputeContext& ctx) const override {
    GB_ASSIGN_OR_RETURN(const Tensor* a, require_input(ctx, 0, "A"));
    GB_ASSIGN_OR_RETURN(const Tensor* b, require_input(ctx, 1, "B"));
    GB_ASSIGN_OR_RETURN(const Tensor* scales, require_input(ctx, 2, "scales"));
    const Tensor* zp = ctx.input(3);
    const Tensor* bias = ctx.num_inputs() > 5 ? ctx.input(5) : nullptr;
    GB_RETURN_IF_ERROR(check_inputs(ctx, *a, *b, *scales, zp, bias));
    Shape out_shape = a->shape();
    out_shape.back() = a_.N;
    GB_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    const int64_t M = a->numel() / a_.K;
    if (M == 0 || a_.N == 0) return Status();
    const kernels::NBitsWeights w = weights(*b, *scales, zp);
    float* py = y->mutable_data<float>();
    if (a_.accuracy_level == 4) {
      multiply_int8(ctx, a->data<float>(), M, w, py);
    } else if (M <= kernels::kNBitsDirectMaxRows) {
      const kernels::NBitsActivations act = kernels::prepare_nbits_activations(a->data<float>(), M, w);
      ctx.pool().parallel_for(a_.N, kDirectRowsPerTask, [&](int64_t n0, int64_t n1) {
        kernels::matmul_nbits_f32(act, w, n0, n1, py, a_.N);
      });
    } else {
      multiply_decoded_tiles(ctx, kernels::prepare_nbits_activations(a->data<float>(), M, w), w, py);
    }
    if (bias) {
      float* py = y->mutable_data<float>();
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < a_.N; ++n) py[m * a_.N + n] += bias->data<float>()[n];
    }
    return Status();
  }

 private:
  kernels::NBitsWeights weights(const Tensor& b, const Tensor& scales, const Tensor* zp) const {
    kernels::NBitsWeights w;
    w.codes = b.data<uint8_t>();
    w.scales = scales.data<float>();
    if (zp && zp->dtype() == DataType::kFloat32) w.zero_float = zp->data<float>();
    if (zp && zp->dtype() == DataType::kUInt8) w.zero_packed = zp->data<uint8_t>();
    w.N = a_.N;
    w.K = a_.K;
    w.bits = a_.bits;
    w.block_size = a_.block_size;
    return w;
  }

  // accuracy_level 4: A quantized to int8 per block as ORT's CPU kernel does, int32 dot products per block (VNNI or
  // the scalar loop); many rows: the same int8 values as floats through the decoded-tile GEMM.
  void multiply_int8(ComputeContext& ctx, const float* A, int64_t M, const kernels::NBitsWeights& w, float* Y) const {
    const kernels::NBitsInt8Activations q = kernels::quantize_nbits_activations(A, M, w);
    if (M <= kernels::kNBitsDirectMaxRows) {
      ctx.pool().parallel_for(a_.N, kDirectRowsPerTask, [&](int64_t n0, int64_t n1) {
        kernels::matmul_nbits_int8(q, w, n0, n1, Y, a_.N);
      });
      return;
    }
    const std::vector<float> as_float = kernels::nbits_int8_as_float(q, w);
    multiply_decoded_tiles(ctx, kernels::prepare_nbits_activations(as_float.data(), M, w), w, Y);
  }

  // Many rows (prefill): tiles of kTileColumns weight rows decoded to fp32 scratch (in the prepared
  // activations' order), then the GEMM.
  void multiply_decoded_tiles(ComputeContext& ctx, const kernels::NBitsActivations& act,
                              const kernels::NBitsWeights& w, float* Y) const {
    const int64_t tiles = (a_.N + kTileColumns - 1) / kTileColumns;
    ctx.pool().parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
      std::vector<float> tile(static_cast<size_t>(kTileColumns * act.k_padded));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n0 = t * kTileColumns, cols = std::min(kTileColumns, a_.N - n0);
        kernels::dequantize_nbits_rows(w, act.k_padded, n0, n0 + cols, tile.data());
        kernels::GemmDesc d;
        d.M = act.M;
        d.N = cols;
        d.K = act.k_padded;
        d.trans_b = true;
        d.lda = act.k_padded;
        d.ldb = act.k_padded;
        d.ldc = a_.N;
        kernels::gemm_f32(d, act.data.data(), tile.data(), Y + n0, nullptr);
      }
    });
  }

  Status check_inputs(const ComputeContext& ctx, const Tensor& a, const Tensor& b, const Tensor& scales, const Tensor* zp,
                      const Tensor* bias) const {
    auto bad = [&](const std::string& what) { return op_error(ctx, ErrorCode::kInvalidArgument, what); };
    if (a.dtype() != DataType::kFloat32)
      return op_error(ctx, ErrorCode::kUnsupported, std::string("A is ") + dtype_name(a.dtype()) + ": only float32 is implemented");
    if (a.rank() < 1 || a.shape().back() != a_.K)
      return bad("A " + shape_to_string(a.shape()) + " does not end in K = " + std::to_string(a_.K));
    const int64_t blob = a_.block_size * a_.bits / 8;
    if (b.dtype() != DataType::kUInt8 || b.numel() != a_.N * k_blocks_ * blob)
      return bad("B must be uint8 [N, k_blocks, blob] = [" + std::to_string(a_.N) + ", " + std::to_string(k_blocks_) + ", " +
                 std::to_string(blob) + "], got " + dtype_name(b.dtype()) + " " + shape_to_string(b.shape()));
    if (scales.dtype() != DataType::kFloat32 || scales.numel() != a_.N * k_blocks_)
      return bad("scales must be float32 with N * k_blocks = " + std::to_string(a_.N * k_blocks_) + " values, got " +
                 dtype_name(scales.dtype()) + " " + shape_to_string(scales.shape()));
    if (zp && zp->dtype() == DataType::kUInt8) {
      if (zp->numel() != a_.N * ((k_blocks_ * a_.bits + 7) / 8))
        return bad("packed uint8 zero_points must have N * ceil(k_blocks * bits / 8) values, got " + shape_to_string(zp->shape()));
    } else if (zp && zp->dtype() == DataType::kFloat32) {
      if (zp->numel() != a_.N * k_blocks_) return bad("float zero_points must have N * k_blocks values, got " + shape_to_string(zp->shape()));
    } else if (zp) {
      return bad(std::string("zero_points must be uint8 (packed) or A's dtype, got ") + dtype_name(zp->dtype()));
    }
    if (bias && (bias->dtype() != DataType::kFloat32 || bias->numel() != a_.N))
      return bad("bias must be float32 [N], got " + shape_to_string(bias->shape()));
    return Status();
  }

  MatMulNBitsAttrs a_;
  int64_t k_blocks_;
};

}  // namespace

Result<std::unique_ptr<Op>> create_ms_MatMulNBits(const graph::Node& node, int64_t) {
  GB_RETURN_IF_ERROR(check_known_attrs(node, {"K", "N", "bits", "block_size", "accuracy_level", "weight_prepacked"}));
  MatMulNBitsAttrs a;
  GB_ASSIGN_OR_RETURN(a.K, attr_int_required(node, "K"));
  GB_ASSIGN_OR_RETURN(a.N, attr_int_required(node, "N"));
  GB_ASSIGN_OR_RETURN(a.bits, attr_int(node, "bits", 4));
  GB_ASSIGN_OR_RETURN(a.block_size, attr_int_required(node, "block_size"));
  GB_ASSIGN_OR_RETURN(a.accuracy_level, attr_int(node, "accuracy_level", 0));
  GB_ASSIGN_OR_RETURN(int64_t prepacked, attr_int(node, "weight_prepacked", 0));
  if (prepacked != 0)
    return unsupported_attr("weight_prepacked", std::to_string(prepacked) + " (CUDA's prepacked layouts); only 0 is implemented");
  if (a.bits != 4 && a.bits != 8) return unsupported_attr("bits", std::to_string(a.bits) + "; 4 and 8 are implemented");
  if (a.block_size < 16 || (a.block_size & (a.block_size - 1)) != 0)
    return make_error(ErrorCode::kInvalidModel, "attribute 'block_size' " + std::to_string(a.block_size) +
                                                    " is not a power of two >= 16");
  if (a.K < 1 || a.N < 0) return make_error(ErrorCode::kInvalidModel, "attributes K and N must be positive");
  if (a.accuracy_level < 0 || a.accuracy_level > 4)
    return unsupported_attr("accuracy_level", std::to_string(a.accuracy_level) + "; ORT defines 0 to 4");
  if (node.inputs.size() > 4 && !node.inputs[4].empty())
    return make_error(ErrorCode::kUnsupported, "input 'g_idx' (deprecated act-order index) is not implemented", {},
                      "re-quantize without act-order (g_idx)");
  if (node.inputs.size() > 6) return make_error(ErrorCode::kInvalidModel, "MatMulNBits has at most 6 inputs");
  return std::unique_ptr<Op>(new MatMulNBitsOp(a));
}

}  // namespace glassbox::ops
