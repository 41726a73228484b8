// Pass conv_epilogue_fusion: what exporters write after a Conv with constant weights,
//   Conv [+ per-channel Mul / Add / Sub / Div by constants, or BatchNormalization (inference)]...
//        [+ Relu | Clip | HardSigmoid | Sigmoid | HardSwish, or HardSwish as Paddle2ONNX writes it:
//           Div(Mul(y, Clip(Add(y, 3), 0, 6)), 6)]
// becomes one glassbox::FusedConv: the scales and shifts folded into new W and B initializers (computed in
// double), the activation applied inside the oneDNN primitive. PP-OCR's exports write every Conv as
// Conv/Mul/Add/hardswish (six nodes, five passes over memory); this makes them one.
#include <cmath>
#include <limits>

#include "graph/passes/pattern.h"

namespace glassbox::graph::passes {
namespace {

// A constant that multiplies or adds per output channel of a conv output of rank 2 + `spatial` with `m`
// channels: one element, or m elements along the channel axis (all other dims 1). Values in *v (m of them).
bool channel_constant(const Graph& g, const std::string& name, int64_t m, int spatial, std::vector<double>* v) {
  auto it = g.initializers.find(name);
  if (it == g.initializers.end() || it->second.dtype() != DataType::kFloat32) return false;
  const Tensor& t = it->second;
  const float* d = t.data<float>();
  if (t.numel() == 1) {
    v->assign(static_cast<size_t>(m), d[0]);
    return true;
  }
  const int64_t rank = spatial + 2, r = t.rank();
  const int64_t axis = r - rank + 1;  // the channel axis in t's (right-aligned) dims
  if (r > rank || axis < 0 || t.shape()[axis] != m || t.numel() != m) return false;
  v->assign(d, d + m);
  return true;
}

// Per-channel affine y' = y * scale + shift, accumulated over the folded nodes.
struct Affine {
  std::vector<double> scale, shift;
};

// Folds node n (reading `value`) into `af` if it is a per-channel affine step; false otherwise.
bool fold_affine(const Graph& g, const Node& n, const std::string& value, int64_t m, int spatial, Affine& af) {
  std::vector<double> v;
  if ((is_onnx(n, "Mul") || is_onnx(n, "Add")) && n.inputs.size() == 2) {
    const std::string c = other_input(n, value);
    if (c.empty() || !channel_constant(g, c, m, spatial, &v)) return false;
    for (int64_t k = 0; k < m; ++k) {
      if (is_onnx(n, "Mul")) af.scale[k] *= v[k], af.shift[k] *= v[k];
      else af.shift[k] += v[k];
    }
    return true;
  }
  if ((is_onnx(n, "Sub") || is_onnx(n, "Div")) && n.inputs.size() == 2 && n.inputs[0] == value && n.inputs[1] != value) {
    if (!channel_constant(g, n.inputs[1], m, spatial, &v)) return false;
    for (int64_t k = 0; k < m; ++k) {
      if (is_onnx(n, "Sub")) af.shift[k] -= v[k];
      else if (v[k] == 0) return false;
      else af.scale[k] /= v[k], af.shift[k] /= v[k];
    }
    return true;
  }
  if (is_onnx(n, "BatchNormalization") && n.inputs.size() == 5 && n.inputs[0] == value && n.outputs.size() == 1) {
    const Attribute* tm = n.attr("training_mode");
    if (tm && tm->i != 0) return false;
    const Attribute* eps_attr = n.attr("epsilon");
    const double eps = eps_attr ? eps_attr->f : 1e-5;
    std::vector<double> gamma, beta, mean, var;
    if (!channel_constant(g, n.inputs[1], m, 0, &gamma) || !channel_constant(g, n.inputs[2], m, 0, &beta) ||
        !channel_constant(g, n.inputs[3], m, 0, &mean) || !channel_constant(g, n.inputs[4], m, 0, &var))
      return false;
    for (int64_t k = 0; k < m; ++k) {
      const double s = gamma[k] / std::sqrt(var[k] + eps);
      af.scale[k] *= s;
      af.shift[k] = (af.shift[k] - mean[k]) * s + beta[k];
    }
    return true;
  }
  return false;
}

struct Activation {
  std::string kind;  // "" = none
  float alpha = 0, beta = 0;
  std::vector<int> nodes;  // the nodes it replaces; the last one's output is the fused output
};

bool near(float v, double want) { return std::fabs(v - want) <= 1e-6 * std::fabs(want); }

// Clip's bounds: inputs 1/2 (opset >= 11; absent = unbounded) or attributes min/max (older opsets).
bool clip_bounds(const Graph& g, const Node& n, float* lo, float* hi) {
  *lo = -std::numeric_limits<float>::max(), *hi = std::numeric_limits<float>::max();
  if (const Attribute* a = n.attr("min")) *lo = a->f;
  if (const Attribute* a = n.attr("max")) *hi = a->f;
  if (n.inputs.size() > 1 && !n.inputs[1].empty() && !scalar_constant(g, n.inputs[1], lo)) return false;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !scalar_constant(g, n.inputs[2], hi)) return false;
  return true;
}

// Paddle2ONNX's hardswish on `y` (read by exactly its Add and its Mul): Div(Mul(y, Clip(Add(y, 3), 0, 6)), 6),
// the last step also as Mul by 1/6.
bool paddle_hardswish(const Graph& g, const GraphIndex& index, const std::string& y, int after, Activation* act) {
  if (index.uses(y) != 2) return false;
  int add = -1;
  for (size_t i = static_cast<size_t>(after + 1); i < g.nodes.size() && add < 0; ++i) {
    const Node& n = g.nodes[i];
    float c = 0;
    if (is_onnx(n, "Add") && scalar_constant(g, other_input(n, y), &c) && c == 3.f) add = static_cast<int>(i);
  }
  if (add < 0) return false;
  const int clip = index.sole_consumer(g.nodes[add].outputs[0], add);
  float lo = 0, hi = 0;
  if (clip < 0 || !is_onnx(g.nodes[clip], "Clip") || !clip_bounds(g, g.nodes[clip], &lo, &hi) || lo != 0.f || hi != 6.f)
    return false;
  const int mul = index.sole_consumer(g.nodes[clip].outputs[0], clip);
  if (mul < 0 || !is_onnx(g.nodes[mul], "Mul") || other_input(g.nodes[mul], g.nodes[clip].outputs[0]) != y) return false;
  const int div = index.sole_consumer(g.nodes[mul].outputs[0], mul);
  if (div < 0) return false;
  const Node& d = g.nodes[div];
  float c = 0;
  const bool by6 = is_onnx(d, "Div") && d.inputs.size() == 2 && d.inputs[0] == g.nodes[mul].outputs[0] &&
                   scalar_constant(g, d.inputs[1], &c) && c == 6.f;
  const bool times = is_onnx(d, "Mul") && scalar_constant(g, other_input(d, g.nodes[mul].outputs[0]), &c) && near(c, 1.0 / 6);
  if (!by6 && !times) return false;
  act->kind = "hard_swish";
  act->nodes = {add, clip, mul, div};
  return true;
}

// The activation reading `y` (produced by node `after`), if one can be fused.
Activation find_activation(const Graph& g, const GraphIndex& index, const std::string& y, int after) {
  Activation act;
  if (paddle_hardswish(g, index, y, after, &act)) return act;
  const int n = index.sole_consumer(y, after);
  if (n < 0 || g.nodes[n].outputs.size() != 1) return act;
  const Node& node = g.nodes[n];
  if (is_onnx(node, "Relu")) act.kind = "relu";
  else if (is_onnx(node, "Sigmoid")) act.kind = "sigmoid";
  else if (is_onnx(node, "HardSwish")) act.kind = "hard_swish";
  else if (is_onnx(node, "Clip") && clip_bounds(g, node, &act.alpha, &act.beta)) act.kind = "clip";
  else if (is_onnx(node, "HardSigmoid")) {
    act.kind = "hard_sigmoid";
    const Attribute* a = node.attr("alpha");
    const Attribute* b = node.attr("beta");
    act.alpha = a ? a->f : 0.2f;
    act.beta = b ? b->f : 0.5f;
  }
  if (!act.kind.empty()) act.nodes = {n};
  return act;
}

// W and B of conv node `c` scaled and shifted by `af` (double precision), as new initializers; returns their names.
Result<std::pair<std::string, std::string>> folded_weights(Graph& graph, const Node& conv, const Affine& af) {
  const Tensor& w = graph.initializers.at(conv.inputs[1]);
  const int64_t m = w.shape()[0], per = w.numel() / m;
  GB_ASSIGN_OR_RETURN(Tensor w2, Tensor::allocate(DataType::kFloat32, w.shape()));
  GB_ASSIGN_OR_RETURN(Tensor b2, Tensor::allocate(DataType::kFloat32, {m}));
  const float* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? graph.initializers.at(conv.inputs[2]).data<float>() : nullptr;
  for (int64_t k = 0; k < m; ++k) {
    for (int64_t i = 0; i < per; ++i)
      w2.mutable_data<float>()[k * per + i] = static_cast<float>(w.data<float>()[k * per + i] * af.scale[k]);
    b2.mutable_data<float>()[k] = static_cast<float>((b ? b[k] : 0.0) * af.scale[k] + af.shift[k]);
  }
  const std::string wn = conv.name + "/folded_W", bn = conv.name + "/folded_B";
  set_initializer(graph, wn, std::move(w2));
  set_initializer(graph, bn, std::move(b2));
  return std::make_pair(wn, bn);
}

// Conv node c's weights: constant float32, rank >= 3; bias constant [M] or absent.
bool constant_conv(const Graph& g, const Node& c) {
  if (!is_onnx(c, "Conv") || c.inputs.size() < 2 || c.outputs.size() != 1) return false;
  auto w = g.initializers.find(c.inputs[1]);
  if (w == g.initializers.end() || w->second.dtype() != DataType::kFloat32 || w->second.rank() < 3 ||
      w->second.shape()[0] < 1)
    return false;
  return c.inputs.size() < 3 || c.inputs[2].empty() || vector_constant(g, c.inputs[2]) == w->second.shape()[0];
}

}  // namespace

Status conv_epilogue_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name) {
  GraphIndex index(graph);
  std::set<int> dead;
  std::vector<std::string> replaced;  // initializers the fused nodes no longer read (dropped when unused)
  for (size_t ci = 0; ci < graph.nodes.size(); ++ci) {
    const int c = static_cast<int>(ci);
    if (dead.count(c) || !constant_conv(graph, graph.nodes[c])) continue;
    const Node& conv = graph.nodes[c];
    const Tensor& w = graph.initializers.at(conv.inputs[1]);
    const int64_t m = w.shape()[0];
    const int spatial = static_cast<int>(w.rank()) - 2;
    Affine af{std::vector<double>(static_cast<size_t>(m), 1.0), std::vector<double>(static_cast<size_t>(m), 0.0)};
    std::vector<int> nodes;
    std::string y = conv.outputs[0];
    int last = c;
    for (int n = index.sole_consumer(y, last); n >= 0 && !dead.count(n) && fold_affine(graph, graph.nodes[n], y, m, spatial, af);
         n = index.sole_consumer(y, last)) {
      nodes.push_back(n);
      y = graph.nodes[n].outputs[0];
      last = n;
    }
    Activation act = find_activation(graph, index, y, last);
    bool overlap = false;
    for (int n : act.nodes) overlap = overlap || dead.count(n);
    if (overlap) act = Activation{};
    if (nodes.empty() && act.kind.empty()) continue;
    nodes.insert(nodes.end(), act.nodes.begin(), act.nodes.end());
    last = nodes.back();
    Node fused;
    fused.name = conv.name + "/conv_fused";
    fused.op_type = "FusedConv";
    fused.domain = kInternalDomain;
    fused.attributes = conv.attributes;
    fused.inputs = conv.inputs;
    fused.outputs = {graph.nodes[last].outputs[0]};
    if (nodes.size() > act.nodes.size()) {  // something was folded into W and B
      GB_ASSIGN_OR_RETURN(auto wb, folded_weights(graph, conv, af));
      for (size_t k = 1; k < conv.inputs.size(); ++k)
        if (!conv.inputs[k].empty()) replaced.push_back(conv.inputs[k]);
      fused.inputs = {conv.inputs[0], wb.first, wb.second};
    }
    if (!act.kind.empty()) {
      fused.attributes["activation"] = string_attr("activation", act.kind);
      fused.attributes["activation_alpha"] = float_attr("activation_alpha", act.alpha);
      fused.attributes["activation_beta"] = float_attr("activation_beta", act.beta);
    }
    ctx.log.push_back(pass_name + ": fused Conv '" + conv.name + "' and " + std::to_string(nodes.size()) + " nodes into FusedConv '" +
                      fused.name + "' (" + std::to_string(nodes.size() - act.nodes.size()) + " folded into W/B, activation " +
                      (act.kind.empty() ? std::string("none") : act.kind) + ")");
    dead.insert(c);
    for (int n : nodes)
      if (n != last) dead.insert(n);
    graph.nodes[last] = std::move(fused);
  }
  erase_nodes(graph, dead);
  GraphIndex after(graph);
  for (const auto& name : replaced)
    if (after.uses(name) == 0) graph.initializers.erase(name), graph.initializer_info.erase(name);
  return {};
}

}  // namespace glassbox::graph::passes
