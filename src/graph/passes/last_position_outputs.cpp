// Pass last_position_outputs: runs only for the outputs a caller names in
// SessionOptions::last_position_outputs (the generation session names `logits`: sampling reads
// each sequence's last position only). An output [batch, sequence, N] made by a MatMul (or
// com.microsoft MatMulNBits) over [batch, sequence, K], possibly followed by per-position
// element-wise ops with constant operands (bias Add, softcap Div/Tanh/Mul, Cast), is computed for
// the last position only: Slice(A, starts -1, ends max, axis 1) feeds the MatMul, and the output
// becomes [batch, 1, N]. Each row of a MatMul depends on its own row of A only, so the kept row's
// values are the ones the whole product would have had there. An If (Optimum's merged decoder)
// is followed into both branches. When the chain is anything else (a quantized head whose
// activation scale is taken over every position, a reshape to 2-D, a value read elsewhere) the
// output is left whole and the log says why: the caller reads the output's shape, never assumes it.
#include <algorithm>
#include <limits>

#include "graph/passes/passes.h"

namespace glassbox::graph::passes {
namespace {

constexpr const char* kSliceSuffix = "/last_position";

bool is_default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

bool is_head_matmul(const Node& n) {
  return (n.op_type == "MatMul" && is_default_domain(n)) || (n.op_type == "MatMulNBits" && n.domain == "com.microsoft");
}

// Element-wise ops that keep positions apart: unary, or binary with a constant operand of rank <= 1
// (broadcast over the last axis only).
bool is_per_position(const Graph& g, const Node& n, std::string* through) {
  if (!is_default_domain(n)) return false;
  if ((n.op_type == "Tanh" || n.op_type == "Cast" || n.op_type == "Identity") && n.inputs.size() == 1) {
    *through = n.inputs[0];
    return true;
  }
  if ((n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") && n.inputs.size() == 2) {
    for (int c = 0; c < 2; ++c) {
      auto it = g.initializers.find(n.inputs[c]);
      if (it != g.initializers.end() && it->second.shape().size() <= 1) {
        *through = n.inputs[1 - c];
        return true;
      }
    }
  }
  return false;
}

// Whether `value` is known (graph input or shape inference) to have rank 3.
bool is_rank3(const Graph& g, const std::string& value) {
  const ValueInfo* info = nullptr;
  if (auto it = g.value_info.find(value); it != g.value_info.end()) info = &it->second;
  for (const auto& in : g.inputs)
    if (in.name == value) info = &in;
  return info && info->has_shape && info->dims.size() == 3;
}

int producer_of(const Graph& g, const std::string& value) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (o == value) return static_cast<int>(i);
  return -1;
}

// Nodes (and graph outputs) that read `value`. The node that makes it is skipped: an If's branch output named
// like the If's own output is not a read of it.
int readers_of(const Graph& g, const std::string& value) {
  int n = 0;
  for (const auto& node : g.nodes) {
    if (std::find(node.outputs.begin(), node.outputs.end(), value) != node.outputs.end()) continue;
    std::set<std::string> used;
    collect_used_names(node, used);
    n += static_cast<int>(used.count(value));
  }
  for (const auto& o : g.outputs) n += o.name == value;
  return n;
}

Status add_int64_initializer(Graph& g, const std::string& name, int64_t value) {
  GB_ASSIGN_OR_RETURN(Tensor t, int64_tensor({value}));
  set_initializer(g, name, std::move(t));
  return {};
}

// The output's dims after the rewrite: [batch, 1, N].
void set_one_position(std::vector<ValueInfo>& infos, const std::string& name) {
  for (auto& vi : infos)
    if (vi.name == name && vi.has_shape && vi.dims.size() == 3) vi.dims[1] = Dim{1, {}};
}

// Rewrites the chain ending in `output` of `g`; "" when done (or already done), else why not.
// output_rank3: the output is declared [batch, sequence, N] (by its graph, or by the If that returns it).
// outer: the graph an If branch `g` belongs to (its initializers are visible in the branch), else nullptr.
Result<std::string> rewrite(Graph& g, const Graph* outer, const std::string& output, bool output_rank3, PassContext& ctx,
                            const std::string& pass_name);

Result<std::string> rewrite_if(const Graph& g, Node& node, const std::string& output, bool output_rank3, PassContext& ctx,
                               const std::string& pass_name) {
  size_t k = 0;
  while (k < node.outputs.size() && node.outputs[k] != output) ++k;
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto it = node.attributes.find(branch);
    if (it == node.attributes.end() || !it->second.g || it->second.g->outputs.size() <= k)
      return std::string("If '") + node.name + "' has no " + branch + " output " + std::to_string(k);
    Graph& b = *it->second.g;
    GB_ASSIGN_OR_RETURN(std::string why, rewrite(b, &g, b.outputs[k].name, output_rank3, ctx, pass_name));
    if (!why.empty()) return std::string(branch) + " of If '" + node.name + "': " + why;
    set_one_position(b.outputs, b.outputs[k].name);
  }
  return std::string();
}

// Whether the head's input A is [batch, sequence, K]: known so, or implied by a rank-3 output of a head whose
// weights are 2-D (MatMulNBits always; MatMul with a 2-D initializer) through the rank-keeping chain.
bool head_input_is_rank3(const Graph& g, const Graph* outer, const Node& head, bool output_rank3) {
  if (is_rank3(g, head.inputs[0])) return true;
  if (!output_rank3) return false;
  if (head.op_type == "MatMulNBits") return true;
  const std::string b = head.inputs.size() > 1 ? head.inputs[1] : std::string();
  for (const Graph* scope : {&g, outer})
    if (scope) {
      auto it = scope->initializers.find(b);
      if (it != scope->initializers.end()) return it->second.shape().size() == 2;
    }
  return false;
}

Result<std::string> rewrite(Graph& g, const Graph* outer, const std::string& output, bool output_rank3, PassContext& ctx,
                            const std::string& pass_name) {
  if (readers_of(g, output) != 1) return "'" + output + "' is also read inside the graph";
  std::vector<std::string> chain;  // values from the output back to the MatMul's output
  std::string v = output;
  for (int hops = 0; hops < 8; ++hops) {
    const int p = producer_of(g, v);
    if (p < 0) return "'" + v + "' is not made by a node of its graph";
    Node& node = g.nodes[static_cast<size_t>(p)];
    if (v != output && readers_of(g, v) != 1) return "'" + v + "' is read by more than the chain to the output";
    chain.push_back(v);
    if (node.op_type == "If" && is_default_domain(node) && v == output)
      return rewrite_if(g, node, output, output_rank3, ctx, pass_name);
    if (is_head_matmul(node)) {
      const std::string a = node.inputs[0];
      if (a.size() > std::string(kSliceSuffix).size() && a.ends_with(kSliceSuffix)) return std::string();  // done before
      if (!head_input_is_rank3(g, outer, node, output_rank3))
        return "the MatMul's input '" + a + "' is not known to be [batch, sequence, features]";
      const std::string sliced = a + kSliceSuffix, starts = sliced + "/starts", ends = sliced + "/ends", axes = sliced + "/axes";
      GB_RETURN_IF_ERROR(add_int64_initializer(g, starts, -1));
      GB_RETURN_IF_ERROR(add_int64_initializer(g, ends, std::numeric_limits<int64_t>::max()));
      GB_RETURN_IF_ERROR(add_int64_initializer(g, axes, 1));
      Node slice;
      slice.name = node.name + kSliceSuffix;
      slice.op_type = "Slice";
      slice.inputs = {a, starts, ends, axes};
      slice.outputs = {sliced};
      node.inputs[0] = sliced;
      for (const auto& c : chain) g.value_info.erase(c);  // their sequence dim is 1 now
      ctx.log.push_back(pass_name + ": '" + output + "' for the last position only: Slice '" + slice.name + "' feeds " +
                        node.op_type + " '" + node.name + "'");
      g.nodes.insert(g.nodes.begin() + p, std::move(slice));
      return std::string();
    }
    std::string through;
    if (!is_per_position(g, node, &through))
      return node.op_type + " '" + node.name + "' between the output and its MatMul is not a per-position element-wise op";
    v = through;
  }
  return std::string("no MatMul within 8 nodes of the output");
}

}  // namespace

Status last_position_outputs(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  for (const auto& name : ctx.last_position_outputs) {
    bool declared = false;
    for (const auto& o : graph.outputs) declared = declared || o.name == name;
    if (!declared)
      return make_error(ErrorCode::kInvalidArgument, "last_position_outputs names '" + name + "', not an output of the model",
                        {}, "name one of the model's outputs (glassbox inspect lists them)");
    bool rank3 = false;
    for (const auto& o : graph.outputs) rank3 = rank3 || (o.name == name && o.has_shape && o.dims.size() == 3);
    GB_ASSIGN_OR_RETURN(std::string why, rewrite(graph, nullptr, name, rank3, ctx, pass_name));
    if (!why.empty()) {
      ctx.log.push_back(pass_name + ": '" + name + "' kept at every position: " + why);
      continue;
    }
    set_one_position(graph.outputs, name);
  }
  return {};
}

}  // namespace glassbox::graph::passes
