// The ordered list of graph passes and the helpers they share.
#include "graph/passes/passes.h"

#include <cstring>

namespace glassbox::graph::passes {
namespace {

// Order matters: Identity removal exposes chains, shape folding turns Shape nodes
// into constants that constant folding then propagates (the fusions need their
// scalars and weights as initializers), GELU is one node before the MatMul
// epilogue fusion looks for it, and dead-node elimination sweeps whatever the
// folds left without consumers. attention_fusion and decoder_attention_fusion need the ScaledMaskedSoftmax
// that attention_softmax_fusion makes (the encoder pattern is taken first); qkv_projection_fusion rewrites the projections feeding the
// MultiHeadAttention that attention_fusion made, after dead-node elimination removed the Shape
// nodes that still read them (it drops the initializers it replaces). quantized_matmul_fusion runs before constant folding,
// which would otherwise turn a DequantizeLinear of constant int8 weights into float weights
// (hiding the QDQ pattern); the quantizers write scales and weights as initializers.
// conv_epilogue_fusion needs the folded weights and scales as initializers (after constant folding).
// cache_branch_inlining runs first (only with kv_cache_inputs): every later pass then sees a merged decoder's
// cache branch as the Optimum layout's plain graph. last_position_outputs runs next (and only for the outputs a
// caller names): the later passes then see the Slice it inserts like any other node.
constexpr PassEntry kPasses[] = {
    {"cache_branch_inlining", 2, "only for SessionOptions::kv_cache_inputs (the generation session's past inputs): Optimum's legacy merged decoder, one If on a graph input whose one branch reads every past input, is replaced by that branch (its condition is then read by no node: every run takes the cache branch, the first with an empty past), so kv_cache_binding can bind its caches", &cache_branch_inlining},
    {"last_position_outputs", 1, "only for the outputs named in SessionOptions::last_position_outputs (the generation session: logits): an output [batch, sequence, N] made by a MatMul/MatMulNBits [+ per-position element-wise ops with constants] is computed for the last position only (Slice before the MatMul; output [batch, 1, N]); any other chain is left whole and logged", &last_position_outputs},
    {"identity_removal", 1, "removes Identity nodes, rewiring consumers to the Identity's input", &identity_removal},
    {"shape_folding", 2, "replaces Shape/Size of values whose shape is known (statically or from the run's input shapes) by constants", &shape_folding},
    {"quantized_matmul_fusion", 2, "MatMulInteger/Cast/Mul(scales) (onnxruntime's dynamic quantization) or DequantizeLinear x2/MatMul (QDQ), [+ bias Add] -> glassbox::MatMulIntegerToFloat (u8 x s8 GEMM, scale and bias applied per tile)", &quantized_matmul_fusion},
    {"constant_folding", 1, "evaluates nodes whose inputs are all constants once, at load, and stores the results as initializers", &constant_folding},
    {"conv_epilogue_fusion", 2, "Conv with constant weights + per-channel Mul/Add/Sub/Div by constants or BatchNormalization (folded into new W and B, in double) [+ Relu | Clip | HardSigmoid | Sigmoid | HardSwish, also Paddle2ONNX's Add/Clip/Mul/Div hardswish] -> glassbox::FusedConv (the activation a oneDNN post-op)", &conv_epilogue_fusion},
    {"gelu_fusion", 2, "Div/Erf/Add/Mul/Mul (GELU, erf form) -> one glassbox::Gelu node", &gelu_fusion},
    {"matmul_epilogue_fusion", 2, "MatMul with constant weights + bias Add [+ Gelu] [+ residual Add] -> glassbox::FusedMatMul; MatMulIntegerToFloat [+ Gelu] [+ residual Add] -> MatMulIntegerToFloat with that epilogue (fused into the GEMM tiles)", &matmul_epilogue_fusion},
    {"layer_norm_fusion", 2, "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add (torch.onnx LayerNorm, last axis) -> glassbox::LayerNorm", &layer_norm_fusion},
    {"layer_norm_quantize_fusion", 2, "glassbox::LayerNorm + the DynamicQuantizeLinear reading its output (onnxruntime's dynamic quantization) -> glassbox::LayerNormDynamicQuantize (both outputs, bit-identical; each row's range taken while it is in cache, one op and one parallel pass fewer)", &layer_norm_quantize_fusion},
    {"attention_softmax_fusion", 2, "Div(scores, c)/Add(mask)/Softmax(-1) -> glassbox::ScaledMaskedSoftmax (one pass over the attention scores)", &attention_softmax_fusion},
    {"attention_fusion", 2, "Reshape/Transpose of Q, K, V + MatMul/ScaledMaskedSoftmax/MatMul + Transpose (encoder self-attention) -> glassbox::MultiHeadAttention (no head transposes; scores of one head stay in cache)", &attention_fusion},
    {"decoder_attention_fusion", 2, "MatMul(Q, Transpose[0,1,3,2](K))/ScaledMaskedSoftmax/MatMul(., V) over head-major keys and values [+ torch's repeat_kv Unsqueeze/Expand/Reshape of each] (decoder attention) -> glassbox::DecoderAttention (query heads read their key/value head in place: no repeated copies, no key transpose)", &decoder_attention_fusion},
    {"kv_cache_binding", 2, "only for SessionOptions::kv_cache_inputs (the generation session's past inputs): each Concat(past, new) -> present read by a DecoderAttention leaves the graph; the attention appends the new keys/values to the caller's bound cache and reads it in place (Session::run_bound), Shape(present) becomes Shape(past) + Shape(new); a com.microsoft GroupQueryAttention reading the past inputs (onnxruntime-genai) becomes glassbox::GroupQueryAttention, which does the same and drops its presents; all or none", &kv_cache_binding},
    {"dead_node_elimination", 1, "removes nodes none of whose outputs reach a graph output", &dead_node_elimination},
    {"qkv_projection_fusion", 2, "the Q, K and V projections (FusedMatMul or MatMulIntegerToFloat) of one MultiHeadAttention, same input, constant weights -> one projection with concatenated weights [K, 3*H*D] whose output the attention reads in place (one GEMM call per layer; int8-dynamic quantizes the input once)", &qkv_projection_fusion},
    // Runtime kernel variants: no graph rewrite (run == nullptr), switched by the same names.
    {"packed_weights", 1, "kernel variant: MatMul (and the fused MatMul ops) pack constant float32 (MatMulInteger: int8) weights once (lazily, at the first run) into oneDNN's blocked layout; costs one extra copy of those weights", nullptr},
};

void collect_graph_names(const Graph& g, std::set<std::string>& used) {
  for (const auto& n : g.nodes) collect_used_names(n, used);
  for (const auto& o : g.outputs) used.insert(o.name);
}

}  // namespace

std::span<const PassEntry> all_passes() { return kPasses; }

bool variant_enabled(const char* name, int opt_level, const std::set<std::string>& disabled) {
  for (const auto& p : kPasses)
    if (std::string(p.name) == name) return p.level <= opt_level && !disabled.count(p.name);
  return false;
}

bool is_pass_name(const std::string& name) {
  for (const auto& p : kPasses)
    if (name == p.name) return true;
  return false;
}

void set_initializer(Graph& graph, const std::string& name, Tensor t) {
  ValueInfo info;
  info.name = name;
  info.dtype = t.dtype();
  info.has_shape = true;
  for (int64_t d : t.shape()) info.dims.push_back(Dim{d, {}});
  graph.initializer_info[name] = std::move(info);
  graph.initializers[name] = std::move(t);
}

Result<Tensor> int64_tensor(const std::vector<int64_t>& values, bool scalar) {
  Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kInt64, shape));
  if (!values.empty()) std::memcpy(t.mutable_raw(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

bool node_has_subgraph(const Node& node) {
  for (const auto& [k, a] : node.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

void collect_used_names(const Node& node, std::set<std::string>& used) {
  for (const auto& in : node.inputs)
    if (!in.empty()) used.insert(in);
  for (const auto& [k, a] : node.attributes) {
    if (a.g) collect_graph_names(*a.g, used);
    for (const auto& g : a.graphs)
      if (g) collect_graph_names(*g, used);
  }
}

std::set<std::string> names_used_in_subgraphs(const Graph& graph) {
  std::set<std::string> used;
  for (const auto& n : graph.nodes)
    for (const auto& [k, a] : n.attributes) {
      if (a.g) collect_graph_names(*a.g, used);
      for (const auto& g : a.graphs)
        if (g) collect_graph_names(*g, used);
    }
  return used;
}

Status run_passes(Graph& graph, int opt_level, const std::set<std::string>& disabled, PassContext& ctx) {
  for (const auto& p : kPasses) {
    if (!p.run || p.level > opt_level || disabled.count(p.name)) continue;
    Status s = p.run(graph, ctx, p.name);
    if (!s.ok()) return std::move(s).take_error().with_where(std::string("graph pass ") + p.name);
  }
  return {};
}

}  // namespace glassbox::graph::passes
