#include "diag/diff.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "glassbox/numerics.h"
#include "glassbox/tensor_io.h"

namespace glassbox::diag {

std::string tensor_file_stem(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return s.empty() ? "_" : s;
}

Result<Capture> capture_run(Session& session, const std::vector<NamedTensor>& inputs) {
  Capture c;
  Status copy_error;
  session.set_observer([&](const NodeEvent& e) -> Status {
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      if (!e.outputs[i] || e.output_names[i].empty()) continue;
      auto copy = e.outputs[i]->clone();
      if (!copy.ok()) return copy.status();
      c.order.push_back({e.node_name, e.op_type, e.output_names[i]});
      c.tensors[e.output_names[i]] = std::move(copy).value();
    }
    return {};
  });
  auto outs = session.run(inputs);
  session.set_observer(nullptr);
  if (!outs.ok()) return std::move(outs).take_error();
  // Graph outputs that no node produced in this run (e.g. folded to constants) still count.
  for (auto& o : *outs)
    if (!c.tensors.count(o.name)) {
      c.order.push_back({"(graph output)", "-", o.name});
      c.tensors[o.name] = o.tensor;
    }
  return c;
}

Result<std::map<std::string, Tensor>> read_reference_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error(ErrorCode::kNotFound, "reference directory does not exist", dir);
  std::map<std::string, Tensor> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto ext = entry.path().extension().string();
    if (ext != ".npy" && ext != ".pb") continue;
    auto t = runtime::read_tensor_file(entry.path().string());
    if (!t.ok()) return std::move(t).take_error();
    const std::string name = !t->name.empty() ? t->name : entry.path().stem().string();
    out[name] = std::move(t->tensor);
  }
  if (out.empty())
    return make_error(ErrorCode::kNotFound, "no .npy or .pb tensors in the reference directory", dir,
                      "write one file per tensor, named <tensor_name>.npy (see `glassbox diff --help`)");
  return out;
}

Status dump_capture(const Capture& c, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(ErrorCode::kIo, "cannot create dump directory: " + ec.message(), dir);
  for (const auto& p : c.order) {
    const Tensor& t = c.tensors.at(p.tensor);
    const std::string base = dir + "/" + tensor_file_stem(p.tensor);
    if (!runtime::npy_descr(t.dtype()).empty()) GB_RETURN_IF_ERROR(runtime::write_npy(base + ".npy", t));
    else GB_RETURN_IF_ERROR(runtime::write_tensor_pb(base + ".pb", t, p.tensor));
  }
  return {};
}

DiffReport diff_captures(const Capture& a, const std::map<std::string, Tensor>& b, double rtol, double atol) {
  DiffReport r;
  r.rtol = rtol;
  r.atol = atol;
  std::set<std::string> seen;
  for (const auto& p : a.order) {
    seen.insert(p.tensor);
    auto it = b.find(p.tensor);
    if (it == b.end()) {
      r.only_in_a++;
      continue;
    }
    DiffRow row{p.node, p.op_type, p.tensor, compare_tensors(a.tensors.at(p.tensor), it->second, rtol, atol), false};
    row.exceeds = !row.diff.comparable || row.diff.violations > 0;
    row.nonfinite_a = count_non_finite(a.tensors.at(p.tensor)).total();
    row.nonfinite_b = count_non_finite(it->second).total();
    if (row.exceeds && r.first_exceeding < 0) r.first_exceeding = static_cast<int>(r.rows.size());
    if (row.nonfinite_a > 0 && r.first_nonfinite < 0) r.first_nonfinite = static_cast<int>(r.rows.size());
    r.rows.push_back(std::move(row));
    r.compared++;
  }
  for (const auto& [name, t] : b)
    if (!seen.count(name)) r.only_in_b++;
  return r;
}

nlohmann::ordered_json diff_to_json(const DiffReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "glassbox.diff/1";
  j["a"] = r.a_label;
  j["b"] = r.b_label;
  j["rtol"] = r.rtol;
  j["atol"] = r.atol;
  j["compared"] = r.compared;
  j["only_in_a"] = r.only_in_a;
  j["only_in_b"] = r.only_in_b;
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json("inf"); };
  if (r.first_exceeding >= 0) {
    const auto& row = r.rows[r.first_exceeding];
    j["first_divergence"] = {{"node", row.node}, {"op_type", row.op_type}, {"tensor", row.tensor},
                             {"max_abs_err", num(row.diff.max_abs)}, {"max_rel_err", num(row.diff.max_rel)}};
  } else {
    j["first_divergence"] = nullptr;
  }
  if (r.first_nonfinite >= 0) {
    const auto& row = r.rows[r.first_nonfinite];
    j["first_nonfinite"] = {{"node", row.node}, {"op_type", row.op_type}, {"tensor", row.tensor},
                            {"nonfinite_a", row.nonfinite_a}, {"nonfinite_b", row.nonfinite_b}};
  } else {
    j["first_nonfinite"] = nullptr;
  }
  auto rows = nlohmann::ordered_json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"node", row.node},
                    {"op_type", row.op_type},
                    {"tensor", row.tensor},
                    {"max_abs_err", num(row.diff.max_abs)},
                    {"max_rel_err", num(row.diff.max_rel)},
                    {"cosine", num(row.diff.cosine)},
                    {"violations", row.diff.violations},
                    {"nonfinite_a", row.nonfinite_a},
                    {"nonfinite_b", row.nonfinite_b},
                    {"exceeds", row.exceeds},
                    {"note", row.diff.note}});
  j["rows"] = rows;
  return j;
}

std::string diff_to_text(const DiffReport& r, size_t max_rows) {
  std::ostringstream s;
  s << "A: " << r.a_label << "\nB: " << r.b_label << "\ntolerance: |a-b| <= " << r.atol << " + " << r.rtol << "*|b|\n";
  s << "compared " << r.compared << " tensors (" << r.only_in_a << " only in A, " << r.only_in_b << " only in B)\n\n";
  s << "node                                     op                 max_abs_err   max_rel_err   cosine\n";
  size_t shown = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    // Show the start, the first exceeding row and its neighbourhood.
    const bool near_first = r.first_exceeding >= 0 && i + 3 >= static_cast<size_t>(r.first_exceeding) &&
                            i <= static_cast<size_t>(r.first_exceeding) + 3;
    if (shown >= max_rows && !near_first) continue;
    const auto& row = r.rows[i];
    char line[512];
    std::snprintf(line, sizeof line, "%-40.40s %-18.18s %11.3e   %11.3e   %.6f%s\n", row.node.c_str(), row.op_type.c_str(),
                  row.diff.max_abs, row.diff.max_rel, row.diff.cosine, row.exceeds ? "  <-- exceeds" : "");
    s << line;
    shown++;
  }
  if (r.first_exceeding >= 0) {
    const auto& row = r.rows[r.first_exceeding];
    s << "\nfirst divergence: node '" << row.node << "' (" << row.op_type << "), tensor '" << row.tensor << "'\n";
  } else {
    s << "\nno tensor exceeds the tolerance\n";
  }
  if (r.first_nonfinite >= 0) {
    const auto& row = r.rows[r.first_nonfinite];
    s << "first NaN/Inf in A: node '" << row.node << "' (" << row.op_type << "), tensor '" << row.tensor << "': "
      << row.nonfinite_a << " non-finite in A, " << row.nonfinite_b << " in B\n";
  }
  return s.str();
}

Result<SessionOptions> parse_config(const std::string& text, SessionOptions base) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    try {
      if (key == "opt-level") base.opt_level = std::stoi(value);
      else if (key == "threads") base.threads = std::stoi(value);
      else if (key == "disable-pass") base.disabled_passes.push_back(value);
      else if (key == "memory-plan") base.use_memory_plan = value == "on" || value == "true" || value == "1";
      else if (key == "precision") {
        GB_ASSIGN_OR_RETURN(base.precision, parse_precision(value));
      } else
        return make_error(ErrorCode::kInvalidArgument, "unknown configuration key '" + key + "'", text,
                          "use opt-level=N, threads=N, disable-pass=NAME, memory-plan=on|off, precision=fp32|bf16|int8-dynamic");
    } catch (const std::exception&) {
      return make_error(ErrorCode::kInvalidArgument, "bad value '" + value + "' for " + key, text);
    }
  }
  return base;
}

}  // namespace glassbox::diag
