#include "diag/inspect.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "graph/onnx_schema.h"
#include "ops/registry.h"

namespace glassbox::diag {
namespace {

using nlohmann::ordered_json;

void visit_nodes(const graph::Graph& g, const std::function<void(const graph::Node&)>& fn) {
  for (const auto& n : g.nodes) {
    fn(n);
    for (const auto& [k, a] : n.attributes) {
      (void)k;
      if (a.g) visit_nodes(*a.g, fn);
      for (const auto& sg : a.graphs) visit_nodes(*sg, fn);
    }
  }
}

ordered_json dims_json(const graph::ValueInfo& vi) {
  if (!vi.has_shape) return nullptr;
  ordered_json dims = ordered_json::array();
  for (const auto& d : vi.dims) {
    if (d.known()) dims.push_back(d.value);
    else if (!d.symbol.empty()) dims.push_back(d.symbol);
    else dims.push_back(nullptr);
  }
  return dims;
}

ordered_json value_json(const graph::ValueInfo& vi) {
  ordered_json j;
  j["name"] = vi.name;
  j["dtype"] = vi.is_tensor ? dtype_name(vi.dtype) : vi.type_note;
  j["shape"] = dims_json(vi);
  return j;
}

std::string human_bytes(int64_t b) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed;
  if (b >= (int64_t{1} << 30)) s << b / double(int64_t{1} << 30) << " GiB";
  else if (b >= (1 << 20)) s << b / double(1 << 20) << " MiB";
  else if (b >= (1 << 10)) s << b / double(1 << 10) << " KiB";
  else s << b << " B";
  return s.str();
}

std::string join_limited(const std::vector<std::string>& v, size_t limit = 5) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += (i ? ", '" : "'") + v[i] + "'";
  if (v.size() > limit) s += " and " + std::to_string(v.size() - limit) + " more";
  return s;
}

}  // namespace

InspectReport inspect_model(const graph::Model& model) {
  InspectReport r;
  r.model = &model;
  const auto& g = model.graph;

  std::map<std::pair<std::string, std::string>, int64_t> hist;
  std::vector<std::string> control_flow, functions_used;
  visit_nodes(g, [&](const graph::Node& n) {
    hist[{n.domain, n.op_type}]++;
    r.node_count++;
    if (n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan"))
      control_flow.push_back(n.name + " (" + n.op_type + ")");
  });
  for (const auto& [key, count] : hist) {
    const auto& [domain, op] = key;
    r.ops.push_back({op, domain, count, ops::is_supported(domain, op, model.opset(domain))});
  }
  std::stable_sort(r.ops.begin(), r.ops.end(), [](const OpCount& a, const OpCount& b) {
    return a.count != b.count ? a.count > b.count : a.op_type < b.op_type;
  });

  r.initializer_count = static_cast<int64_t>(g.initializers.size());
  for (const auto& [name, t] : g.initializers) {
    (void)name;
    r.initializer_bytes += static_cast<int64_t>(t.nbytes());
  }

  // Shapes known after inference: graph inputs/outputs, initializers, value_info.
  std::set<std::string> known;
  auto note = [&](const graph::ValueInfo& vi) {
    if (vi.has_shape) known.insert(vi.name);
  };
  for (const auto& vi : g.inputs) note(vi);
  for (const auto& vi : g.outputs) note(vi);
  for (const auto& [n, vi] : g.value_info) note(vi);
  for (const auto& [n, vi] : g.initializer_info) note(vi);
  for (const auto& n : g.nodes)
    for (const auto& out : n.outputs)
      if (!out.empty() && !known.count(out)) r.unknown_shapes.push_back({n.name, n.op_type, out});

  // Warnings a production engineer wants before deploying.
  std::set<std::string> constants;
  for (const auto& [n, t] : g.initializers) constants.insert(n);
  for (const auto& n : g.nodes)
    if (n.op_type == "Constant") constants.insert(n.outputs.begin(), n.outputs.end());
  std::vector<std::string> dynamic_resize;
  for (const auto& n : g.nodes) {
    if (n.op_type != "Resize") continue;
    // inputs: X, roi, scales, sizes (opset 11+); opset 10: X, scales
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (model.opset() >= 11 && i == 1) continue;  // roi only matters for tf_crop_and_resize
      if (!n.inputs[i].empty() && !constants.count(n.inputs[i])) {
        dynamic_resize.push_back(n.name);
        break;
      }
    }
  }
  if (!dynamic_resize.empty())
    r.warnings.push_back({"dynamic_resize", "Resize with scales/sizes computed at run time: " + join_limited(dynamic_resize) +
                                                "; output size depends on input shape, check every resolution you serve"});
  if (model.external_data.tensors > 0)
    r.warnings.push_back({"external_data", std::to_string(model.external_data.tensors) + " initializers (" +
                                               human_bytes(model.external_data.bytes) + ") live in external files " +
                                               join_limited(model.external_data.files) +
                                               "; deploy them together with the .onnx file"});
  const int64_t opset = model.opset();
  if (opset > 0 && opset < 13)
    r.warnings.push_back({"old_opset", "ai.onnx opset " + std::to_string(opset) +
                                           " is older than 13; exporters of that era froze more shapes at trace time"});
  const int64_t newest = ops::newest_supported_opset();
  if (opset > newest)
    r.warnings.push_back({"opset_newer_than_registry", "ai.onnx opset " + std::to_string(opset) +
                                                           " is newer than the newest glassbox supports (" +
                                                           std::to_string(newest) + ")"});
  std::vector<std::string> dynamic_rank;
  for (const auto& in : g.inputs)
    if (!in.has_shape) dynamic_rank.push_back(in.name);
  if (!dynamic_rank.empty())
    r.warnings.push_back({"dynamic_rank_input", "inputs with fully dynamic rank: " + join_limited(dynamic_rank) +
                                                    "; nothing can be planned or checked ahead of time"});
  if (!control_flow.empty())
    r.warnings.push_back({"control_flow", "If/Loop/Scan present: " + join_limited(control_flow) +
                                              "; trace-based export (torch.onnx) often freezes one branch or trip count"});
  std::vector<std::string> unsupported;
  for (const auto& op : r.ops)
    if (!op.supported) unsupported.push_back((op.domain.empty() ? "" : op.domain + "::") + op.op_type);
  if (!unsupported.empty())
    r.warnings.push_back({"unsupported_ops", "ops glassbox cannot run at this opset: " + join_limited(unsupported, 20)});
  if (!model.functions.empty())
    r.warnings.push_back({"model_functions", "model-local functions: " + join_limited(model.functions)});
  if (!model.checker_error.empty())
    r.warnings.push_back({"checker_failed", "the ONNX checker rejects this model (see checker.error)"});
  if (!model.shape_inference_errors.empty())
    r.warnings.push_back({"shape_inference_failed", "ONNX shape inference stopped with an error (see shape_inference.errors)"});
  return r;
}

ordered_json inspect_to_json(const InspectReport& r) {
  const auto& m = *r.model;
  ordered_json j;
  j["schema"] = "glassbox.inspect/1";
  j["path"] = m.path;
  j["file_bytes"] = m.file_bytes;
  j["ir_version"] = m.ir_version;
  j["producer"] = {{"name", m.producer_name}, {"version", m.producer_version}};
  j["domain"] = m.domain;
  j["model_version"] = m.model_version;
  ordered_json opsets = ordered_json::array();
  for (const auto& [d, v] : m.opset_imports) opsets.push_back({{"domain", d.empty() ? "ai.onnx" : d}, {"version", v}});
  j["opset_imports"] = opsets;
  ordered_json ins = ordered_json::array(), outs = ordered_json::array();
  for (const auto& vi : m.graph.inputs) ins.push_back(value_json(vi));
  for (const auto& vi : m.graph.outputs) outs.push_back(value_json(vi));
  j["inputs"] = ins;
  j["outputs"] = outs;
  j["node_count"] = r.node_count;
  ordered_json ops = ordered_json::array();
  for (const auto& op : r.ops)
    ops.push_back({{"op_type", op.op_type}, {"domain", op.domain.empty() ? "ai.onnx" : op.domain}, {"count", op.count},
                   {"supported", op.supported}});
  j["ops"] = ops;
  j["initializers"] = {{"count", r.initializer_count},
                       {"bytes", r.initializer_bytes},
                       {"external_tensors", m.external_data.tensors},
                       {"external_bytes", m.external_data.bytes},
                       {"external_files", m.external_data.files}};
  j["checker"] = {{"ran", m.checker_ran}, {"passed", m.checker_ran && m.checker_error.empty()},
                  {"error", m.checker_error.empty() ? ordered_json(nullptr) : ordered_json(m.checker_error)},
                  {"not_checked_no_onnx_schema", graph::nodes_without_onnx_schema(m)}};
  ordered_json unknown = ordered_json::array();
  for (const auto& u : r.unknown_shapes) unknown.push_back({{"node", u.node}, {"op_type", u.op_type}, {"output", u.output}});
  j["shape_inference"] = {{"ran", m.shape_inference_ran}, {"errors", m.shape_inference_errors}, {"unknown_shapes", unknown}};
  ordered_json warns = ordered_json::array();
  for (const auto& w : r.warnings) warns.push_back({{"code", w.code}, {"message", w.message}});
  j["warnings"] = warns;
  return j;
}

std::string inspect_to_text(const InspectReport& r) {
  const auto& m = *r.model;
  std::ostringstream s;
  s << "model        " << m.path << " (" << human_bytes(m.file_bytes) << ")\n";
  s << "ir_version   " << m.ir_version << "\n";
  s << "producer     " << (m.producer_name.empty() ? "(none)" : m.producer_name) << " " << m.producer_version << "\n";
  s << "opsets      ";
  for (const auto& [d, v] : m.opset_imports) s << " " << (d.empty() ? "ai.onnx" : d) << "=" << v;
  s << "\n\ninputs\n";
  auto io = [&](const std::vector<graph::ValueInfo>& v) {
    for (const auto& vi : v)
      s << "  " << vi.name << "  " << (vi.is_tensor ? dtype_name(vi.dtype) : vi.type_note.c_str()) << " "
        << vi.shape_string() << "\n";
  };
  io(m.graph.inputs);
  s << "outputs\n";
  io(m.graph.outputs);
  s << "\nops (" << r.node_count << " nodes, " << r.ops.size() << " types)\n";
  size_t width = 8;
  for (const auto& op : r.ops) width = std::max(width, op.op_type.size() + (op.domain.empty() ? 0 : op.domain.size() + 2));
  for (const auto& op : r.ops) {
    std::string name = (op.domain.empty() ? "" : op.domain + "::") + op.op_type;
    s << "  " << name << std::string(width - name.size() + 2, ' ');
    std::string count = std::to_string(op.count);
    s << std::string(count.size() < 6 ? 6 - count.size() : 0, ' ') << count << "  "
      << (op.supported ? "supported" : "UNSUPPORTED") << "\n";
  }
  s << "\ninitializers " << r.initializer_count << " (" << human_bytes(r.initializer_bytes) << ")";
  if (m.external_data.tensors) s << ", external " << m.external_data.tensors << " (" << human_bytes(m.external_data.bytes) << ")";
  s << "\nchecker      " << (!m.checker_ran ? "not run" : m.checker_error.empty() ? "passed" : "FAILED: " + m.checker_error);
  if (auto no_schema = graph::nodes_without_onnx_schema(m); !no_schema.empty())
    s << " (" << no_schema.size() << " node(s) skipped, no schema in the linked ONNX; glassbox's op validates them: "
      << no_schema.front() << ")";
  s << "\n";
  s << "shapes       " << r.unknown_shapes.size() << " node outputs unknown after shape inference";
  if (!m.shape_inference_errors.empty()) s << " (inference error: " << m.shape_inference_errors.front() << ")";
  s << "\n";
  for (size_t i = 0; i < r.unknown_shapes.size() && i < 10; ++i)
    s << "  " << r.unknown_shapes[i].node << " (" << r.unknown_shapes[i].op_type << ") -> " << r.unknown_shapes[i].output << "\n";
  if (r.unknown_shapes.size() > 10) s << "  ... and " << r.unknown_shapes.size() - 10 << " more (see --json)\n";
  s << "\nwarnings (" << r.warnings.size() << ")\n";
  for (const auto& w : r.warnings) s << "  [" << w.code << "] " << w.message << "\n";
  return s.str();
}

}  // namespace glassbox::diag
