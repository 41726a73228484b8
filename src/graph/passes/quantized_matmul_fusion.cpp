// Pass quantized_matmul_fusion: the two ways onnxruntime's quantizer writes an
// int8 linear layer become one glassbox::MatMulIntegerToFloat node (integer GEMM
// with the scale and bias applied while each output tile is copied out):
//  dynamic (quantize_dynamic, MatMulInteger form):
//    MatMulInteger(Aq, Wq, a_zp, w_zp) -> Cast(to float) -> Mul(., Mul(a_scale, w_scale)) [-> Add(bias)]
//  QDQ (static, QuantizeLinear/DequantizeLinear around the MatMul):
//    MatMul(DequantizeLinear(Aq, a_scale, a_zp), DequantizeLinear(Wq, w_scale, w_zp)) [-> Add(bias)]
// Wq must be a 2-D int8 initializer [K, N], w_scale / w_zp initializers with 1 or
// N entries (per output column: axis 1), bias a float32 [N] initializer. In the
// dynamic form the fused op computes exactly what the nodes did (same roundings,
// same order); in the QDQ form the float MatMul of dequantized values becomes
// float(int32 sum) * (a_scale * w_scale[j]) — the same real number, rounded once
// instead of K times (what onnxruntime's own QDQ fusion computes too).
// The scale Mul and the DequantizeLinear nodes are left for dead_node_elimination
// (they may feed other layers).
#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

const Tensor* initializer(const Graph& g, const std::string& name) {
  auto it = g.initializers.find(name);
  return it == g.initializers.end() ? nullptr : &it->second;
}

// A constant with 1 entry (rank <= 1), or N entries along the last axis (rank 1).
bool per_tensor_or_column(const Tensor* t, DataType dt, int64_t N) {
  return t && t->dtype() == dt && t->rank() <= 1 && (t->numel() == 1 || t->numel() == N);
}

const Tensor* int8_weights(const Graph& g, const std::string& name) {
  const Tensor* w = initializer(g, name);
  return w && w->dtype() == DataType::kInt8 && w->rank() == 2 ? w : nullptr;
}

std::string input_or_empty(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); }

struct Match {
  std::vector<std::string> inputs;  // MatMulIntegerToFloat's, without bias
  std::set<int> nodes;              // swallowed, the last one included
  int last = -1;
  std::string form;
};

// MatMulInteger -> Cast -> Mul(scale product).
bool match_dynamic(const Graph& g, const GraphIndex& index, int m, Match& out) {
  const Node& mm = g.nodes[m];
  if (!is_onnx(mm, "MatMulInteger") || mm.inputs.size() < 2 || mm.outputs.size() != 1) return false;
  const Tensor* w = int8_weights(g, mm.inputs[1]);
  if (!w) return false;
  const int64_t N = w->shape()[1];
  const std::string w_zp = input_or_empty(mm, 3);
  if (!w_zp.empty() && !per_tensor_or_column(initializer(g, w_zp), DataType::kInt8, N)) return false;
  const int c = index.sole_consumer(mm.outputs[0], m);
  if (c < 0 || !is_onnx(g.nodes[c], "Cast")) return false;
  auto to = g.nodes[c].attributes.find("to");
  if (to == g.nodes[c].attributes.end() || to->second.i != static_cast<int64_t>(DataType::kFloat32)) return false;
  const int mul = index.sole_consumer(g.nodes[c].outputs[0], c);
  if (mul < 0 || !is_onnx(g.nodes[mul], "Mul")) return false;
  const int s = index.producer(other_input(g.nodes[mul], g.nodes[c].outputs[0]));
  if (s < 0 || !is_onnx(g.nodes[s], "Mul") || g.nodes[s].inputs.size() != 2) return false;
  // The weight scale is the constant; the activation scale a scalar (DynamicQuantizeLinear's, or a constant).
  std::string a_scale = g.nodes[s].inputs[0], w_scale = g.nodes[s].inputs[1];
  if (!per_tensor_or_column(initializer(g, w_scale), DataType::kFloat32, N)) std::swap(a_scale, w_scale);
  if (!per_tensor_or_column(initializer(g, w_scale), DataType::kFloat32, N)) return false;
  const int dq = index.producer(a_scale);
  const bool a_scalar = (dq >= 0 && is_onnx(g.nodes[dq], "DynamicQuantizeLinear") &&
                         g.nodes[dq].outputs.size() > 1 && g.nodes[dq].outputs[1] == a_scale) ||
                        per_tensor_or_column(initializer(g, a_scale), DataType::kFloat32, 1);
  if (!a_scalar) return false;
  out.inputs = {mm.inputs[0], mm.inputs[1], a_scale, w_scale, input_or_empty(mm, 2), w_zp};
  out.nodes = {m, c, mul};
  out.last = mul;
  out.form = "MatMulInteger + Cast + Mul";
  return true;
}

// MatMul(DequantizeLinear(Aq uint8), DequantizeLinear(Wq int8 constant)).
bool match_qdq(const Graph& g, const GraphIndex& index, int m, Match& out) {
  const Node& mm = g.nodes[m];
  if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
  const int da = index.producer(mm.inputs[0]), dw = index.producer(mm.inputs[1]);
  if (da < 0 || dw < 0 || !is_onnx(g.nodes[da], "DequantizeLinear") || !is_onnx(g.nodes[dw], "DequantizeLinear"))
    return false;
  const Node& a = g.nodes[da];
  const Node& wn = g.nodes[dw];
  if (a.inputs.size() != 3 || wn.inputs.size() < 2) return false;
  const Tensor* w = int8_weights(g, wn.inputs[0]);
  if (!w) return false;
  const int64_t N = w->shape()[1];
  const std::string w_scale = wn.inputs[1], w_zp = input_or_empty(wn, 2);
  const Tensor* ws = initializer(g, w_scale);
  if (!per_tensor_or_column(ws, DataType::kFloat32, N)) return false;
  if (ws->numel() > 1) {  // per axis: must be the columns (axis 1 of [K, N])
    auto ax = wn.attributes.find("axis");
    const int64_t axis = ax == wn.attributes.end() ? 1 : ax->second.i;
    if (axis != 1 && axis != -1) return false;
  }
  if (!w_zp.empty() && !per_tensor_or_column(initializer(g, w_zp), DataType::kInt8, ws->numel())) return false;
  // Activations: per tensor, uint8 (known from the zero point's dtype).
  if (!per_tensor_or_column(initializer(g, a.inputs[1]), DataType::kFloat32, 1) ||
      !per_tensor_or_column(initializer(g, a.inputs[2]), DataType::kUInt8, 1))
    return false;
  out.inputs = {a.inputs[0], wn.inputs[0], a.inputs[1], w_scale, a.inputs[2], w_zp};
  out.nodes = {m};
  out.last = m;
  out.form = "DequantizeLinear x2 + MatMul";
  return true;
}

}  // namespace

Status quantized_matmul_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const int m = static_cast<int>(i);
    Match match;
    if (!match_dynamic(graph, index, m, match) && !match_qdq(graph, index, m, match)) continue;
    const int64_t N = initializer(graph, match.inputs[1])->shape()[1];
    // [Add(bias [N])]
    std::string bias;
    const int add = index.sole_consumer(graph.nodes[match.last].outputs[0], match.last);
    if (add >= 0 && is_onnx(graph.nodes[add], "Add")) {
      const std::string b = other_input(graph.nodes[add], graph.nodes[match.last].outputs[0]);
      if (!b.empty() && vector_constant(graph, b) == N) {
        bias = b;
        match.nodes.insert(add);
        match.last = add;
      }
    }
    bool overlap = false;
    for (int n : match.nodes) overlap = overlap || dead.count(n);
    if (overlap) continue;
    Node fused;
    fused.name = graph.nodes[m].name + "/quantized";
    fused.op_type = "MatMulIntegerToFloat";
    fused.domain = kInternalDomain;
    fused.inputs = match.inputs;
    fused.inputs.push_back(bias);
    while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {graph.nodes[match.last].outputs[0]};
    ctx.log.push_back(pass_name + ": fused " + match.form + " '" + graph.nodes[m].name + "'" +
                      (bias.empty() ? "" : " + bias") + " -> MatMulIntegerToFloat (" +
                      std::to_string(match.nodes.size()) + " nodes)");
    match.nodes.erase(match.last);
    dead.insert(match.nodes.begin(), match.nodes.end());
    graph.nodes[match.last] = std::move(fused);
  }
  erase_nodes(graph, dead);
  return {};
}

}  // namespace glassbox::graph::passes
