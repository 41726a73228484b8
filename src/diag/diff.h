// `glassbox diff`: run two configurations (two opt levels, two models, or a run
// against reference tensors in a directory) and compare every tensor they
// share by name, in execution order; name the first node whose error exceeds
// the tolerance. JSON schema glassbox.diff/1 (docs/diagnostics.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diag/bench.h"
#include "glassbox/session.h"

namespace glassbox::diag {

// Every intermediate tensor of one run, by name, in execution order.
struct Capture {
  struct Produced {
    std::string node, op_type, tensor;
  };
  std::vector<Produced> order;
  std::map<std::string, Tensor> tensors;
};

// Runs `session` once with an observer that copies every node output.
Result<Capture> capture_run(Session& session, const std::vector<NamedTensor>& inputs);

// Reads DIR/<stem>.npy and DIR/<stem>.pb (TensorProto name wins over the file stem).
Result<std::map<std::string, Tensor>> read_reference_dir(const std::string& dir);

// File stem used for a tensor name by --dump and --reference: characters other than
// [A-Za-z0-9._-] become '_' ("/encoder/layer.0/Add_output_0" -> "_encoder_layer.0_Add_output_0").
std::string tensor_file_stem(const std::string& name);

Status dump_capture(const Capture& c, const std::string& dir);

struct DiffRow {
  std::string node, op_type, tensor;
  TensorDiff diff;
  bool exceeds = false;
  int64_t nonfinite_a = 0, nonfinite_b = 0;  // NaN/Inf elements on each side (glassbox/numerics.h)
};

struct DiffReport {
  std::string a_label, b_label;
  double rtol = 0, atol = 0;
  std::vector<DiffRow> rows;  // execution order of A
  int64_t compared = 0, only_in_a = 0, only_in_b = 0;
  int first_exceeding = -1;  // index into rows
  int first_nonfinite = -1;  // index into rows: the first tensor of A holding a NaN/Inf
};

DiffReport diff_captures(const Capture& a, const std::map<std::string, Tensor>& b, double rtol, double atol);
nlohmann::ordered_json diff_to_json(const DiffReport& r);
std::string diff_to_text(const DiffReport& r, size_t max_rows);

// "opt-level=0,threads=1,disable-pass=constant_folding" applied onto `base`.
Result<SessionOptions> parse_config(const std::string& text, SessionOptions base);

}  // namespace glassbox::diag
