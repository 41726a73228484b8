// Pass cache_branch_inlining (only for SessionOptions::kv_cache_inputs, the generation session's past inputs):
// Optimum's legacy merged decoder is one If on a boolean graph input (use_cache_branch) whose then- or
// else-branch reads the past inputs (the decoder with a past) and whose other branch does not (the decoder
// without one, for the first step). The branch that reads every named past input replaces the If: its nodes,
// initializers and value infos move into the graph and its outputs take the If's output names, so the later
// passes (decoder_attention_fusion, kv_cache_binding) see the Optimum layout's graph. The condition input is
// then read by no node: every run takes the cache branch, the first step with an empty past (what the other
// branch computes; the generation parity tests hold it against onnxruntime running the other branch). Nothing
// changes, and the log says why, when the If is not alone at the top of the graph with a graph-input condition,
// no branch or both read the past inputs, the branch holds subgraphs of its own, or a name would clash.
#include <algorithm>

#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// Names a subgraph reads from outside it.
std::set<std::string> captured(const Graph& branch) {
  std::set<std::string> used, made;
  for (const auto& n : branch.nodes) {
    for (const auto& in : n.inputs)
      if (!in.empty()) used.insert(in);
    for (const auto& o : n.outputs) made.insert(o);
  }
  for (const auto& o : branch.outputs) used.insert(o.name);
  std::set<std::string> out;
  for (const auto& u : used)
    if (!made.count(u) && !branch.initializers.count(u)) out.insert(u);
  return out;
}

// The If node to inline and its cache branch, or why not ("" when it can).
std::string find_branch(const Graph& g, const std::vector<std::string>& pasts, int* node, std::shared_ptr<Graph>* branch) {
  std::vector<int> ifs;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (is_onnx(g.nodes[i], "If")) ifs.push_back(static_cast<int>(i));
  if (ifs.empty()) return "";  // nothing to do: not a merged decoder
  if (ifs.size() != 1) return "the graph holds " + std::to_string(ifs.size()) + " If nodes, not one";
  const Node& n = g.nodes[static_cast<size_t>(ifs[0])];
  const bool cond_is_input = std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == n.inputs[0]; });
  if (!cond_is_input) return "If '" + n.name + "' has condition '" + n.inputs[0] + "', not a graph input";
  for (const auto& p : pasts)
    for (const auto& other : g.nodes)
      if (&other != &n && std::find(other.inputs.begin(), other.inputs.end(), p) != other.inputs.end())
        return "'" + p + "' is read outside If '" + n.name + "'";
  std::vector<std::pair<const char*, std::shared_ptr<Graph>>> reading;
  for (const char* which : {"then_branch", "else_branch"}) {
    const Attribute* a = n.attr(which);
    if (!a || !a->g) return "If '" + n.name + "' has no " + which;
    const auto caps = captured(*a->g);
    const size_t read = static_cast<size_t>(std::count_if(pasts.begin(), pasts.end(), [&](const std::string& p) { return caps.count(p) > 0; }));
    if (read == pasts.size()) reading.emplace_back(which, a->g);
    else if (read != 0) return std::string(which) + " of If '" + n.name + "' reads some past inputs, not all";
  }
  if (reading.size() != 1) return "If '" + n.name + "': " + (reading.empty() ? "no branch reads" : "both branches read") + " the past inputs";
  const Graph& b = *reading[0].second;
  if (b.outputs.size() != n.outputs.size())
    return std::string(reading[0].first) + " of If '" + n.name + "' has " + std::to_string(b.outputs.size()) + " outputs, the If " +
           std::to_string(n.outputs.size());
  std::set<std::string> outer;  // every name outside the branch; the If's own outputs only where the branch returns them
  for (const auto& v : g.inputs) outer.insert(v.name);
  for (const auto& [name, t] : g.initializers) outer.insert(name);
  for (const auto& other : g.nodes)
    for (const auto& o : other.outputs) outer.insert(o);
  for (size_t k = 0; k < n.outputs.size(); ++k)
    if (b.outputs[k].name == n.outputs[k]) outer.erase(n.outputs[k]);
  for (const auto& bn : b.nodes) {
    if (node_has_subgraph(bn)) return std::string(reading[0].first) + " of If '" + n.name + "' holds a subgraph (node '" + bn.name + "')";
    for (const auto& o : bn.outputs)
      if (outer.count(o)) return std::string(reading[0].first) + " of If '" + n.name + "' makes '" + o + "', a name outside it";
  }
  for (const auto& [name, t] : b.initializers)
    if (outer.count(name)) return std::string(reading[0].first) + " of If '" + n.name + "' has initializer '" + name + "', a name outside it";
  *node = ifs[0];
  *branch = reading[0].second;
  return "";
}

}  // namespace

Status cache_branch_inlining(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  if (ctx.kv_cache_inputs.empty()) return {};
  int node = -1;
  std::shared_ptr<Graph> branch;
  if (std::string why = find_branch(graph, ctx.kv_cache_inputs, &node, &branch); !why.empty()) {
    ctx.log.push_back(pass_name + ": not inlined: " + why);
    return {};
  }
  if (node < 0) return {};
  const Node the_if = graph.nodes[static_cast<size_t>(node)];
  // The branch's output k becomes the If's output k: renamed where the branch makes it, an Identity where the
  // branch passes an outer value (or one value twice) through.
  std::map<std::string, std::string> rename;
  std::vector<Node> tail;
  std::set<std::string> made;
  for (const auto& bn : branch->nodes)
    for (const auto& o : bn.outputs) made.insert(o);
  for (size_t k = 0; k < the_if.outputs.size(); ++k) {
    const std::string& from = branch->outputs[k].name;
    const std::string& to = the_if.outputs[k];
    if (from == to) continue;
    if (made.count(from) && !rename.count(from)) {
      rename[from] = to;
      continue;
    }
    Node id;
    id.name = to + "/cache_branch_output";
    id.op_type = "Identity";
    id.inputs = {rename.count(from) ? rename[from] : from};
    id.outputs = {to};
    tail.push_back(std::move(id));
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (static_cast<int>(i) != node) {
      nodes.push_back(std::move(graph.nodes[i]));
      continue;
    }
    for (Node bn : branch->nodes) {
      for (auto* names : {&bn.inputs, &bn.outputs})
        for (auto& v : *names)
          if (auto it = rename.find(v); it != rename.end()) v = it->second;
      nodes.push_back(std::move(bn));
    }
    for (auto& t : tail) nodes.push_back(std::move(t));
  }
  graph.nodes = std::move(nodes);
  for (const auto& [name, t] : branch->initializers) graph.initializers[name] = t;
  for (const auto& [name, info] : branch->initializer_info) graph.initializer_info[name] = info;
  for (const auto& [name, info] : branch->value_info)
    graph.value_info[rename.count(name) ? rename[name] : name] = info;
  ctx.log.push_back(pass_name + ": If '" + the_if.name + "' replaced by its branch that reads the past inputs (" +
                    std::to_string(branch->nodes.size()) + " nodes); its condition '" + the_if.inputs[0] +
                    "' is no longer read: every run takes that branch, the first with an empty past");
  return {};
}

}  // namespace glassbox::graph::passes
