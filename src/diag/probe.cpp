#include "diag/probe.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/tensor_rows.h"
#include "diag/bench.h"
#include "diag/inputs.h"
#include "diag/probe_text.h"
#include "glassbox/numerics.h"
#include "glassbox/pipeline.h"

namespace glassbox::diag {
namespace {

namespace fs = std::filesystem;

// First non-finite element of any float output (every float dtype), as text; empty when all finite.
std::string non_finite(const std::vector<NamedTensor>& outs) {
  for (const auto& o : outs) {
    const int64_t i = first_non_finite(o.tensor);
    if (i >= 0)
      return "output '" + o.name + "' element " + std::to_string(i) + " is " +
             non_finite_kind_name(non_finite_kind(o.tensor, i));
  }
  return {};
}

// Which input dims are the batch (dim 0) and sequence (dim 1) axes: symbolic dims there.
struct Axes {
  bool dynamic_batch = true;
  bool dynamic_sequence = true;
};

Axes find_axes(const Session& s) {
  Axes a;
  bool any_rank2 = false;
  for (const auto& in : s.inputs()) {
    if (!in.has_shape || in.dims.empty()) continue;
    if (in.dims[0] >= 0) a.dynamic_batch = false;
    if (in.dims.size() >= 2) {
      any_rank2 = true;
      if (in.dims[1] >= 0) a.dynamic_sequence = false;
    }
  }
  if (!any_rank2) a.dynamic_sequence = false;
  return a;
}

// Inputs at (batch, seq): dims 0 and 1 replaced, other dims as declared (unknown -> 1).
Result<std::vector<NamedTensor>> make_inputs(const Session& s, int64_t batch, int64_t seq, uint64_t seed,
                                             int64_t other_dim, bool zero_mask = false) {
  std::vector<NamedTensor> out;
  for (const auto& in : s.inputs()) {
    Shape shape;
    for (size_t d = 0; d < in.dims.size(); ++d) {
      if (in.dims[d] >= 0) shape.push_back(in.dims[d]);  // fixed dims stay as declared
      else shape.push_back(d == 0 ? batch : d == 1 ? seq : other_dim);
    }
    GB_ASSIGN_OR_RETURN(Tensor t, generate_input(in, shape, seed));
    std::string lower = in.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (zero_mask && lower.find("mask") != std::string::npos && t.nbytes()) std::memset(t.mutable_raw(), 0, t.nbytes());
    out.push_back({in.name, std::move(t)});
  }
  return out;
}

}  // namespace

const char* probe_status_name(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::kPass: return "PASS";
    case ProbeStatus::kFail: return "FAIL";
    case ProbeStatus::kWarn: return "WARN";
    case ProbeStatus::kSkip: return "SKIP";
  }
  return "?";
}

bool ProbeReport::ok() const {
  for (const auto& c : cases)
    if (c.status == ProbeStatus::kFail) return false;
  return true;
}

namespace {

bool has_mask_input(const Session& session) {
  for (const auto& in : session.inputs()) {
    std::string lower = in.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("mask") != std::string::npos) return true;
  }
  return false;
}

bool has_spatial_input(const Session& session) {  // dynamic dims after dim 1, e.g. NCHW height/width
  for (const auto& in : session.inputs())
    for (size_t d = 2; d < in.dims.size(); ++d)
      if (in.dims[d] < 0) return true;
  return false;
}

// The model file of `path` (a file, or a model directory) and, from a directory's config.json,
// the maximum length when no flag gave one.
Result<std::string> resolve_model(const std::string& path, const ProbeOptions& o, ProbeReport& r) {
  r.max_length = o.max_length;
  r.max_length_source = o.max_length > 0 ? "flag" : "unknown";
  if (!fs::is_directory(path)) return path;
  GB_ASSIGN_OR_RETURN(ModelFileChoice choice, find_model_file(path));  // model.onnx, onnx/model.onnx, ...
  std::ifstream cfg(fs::path(path) / "config.json");
  if (cfg && o.max_length <= 0) {
    auto j = nlohmann::json::parse(cfg, nullptr, false);
    if (!j.is_discarded() && j.contains("max_position_embeddings") && j["max_position_embeddings"].is_number_integer()) {
      r.max_length = j["max_position_embeddings"].get<int64_t>();
      r.max_length_source = "config.json max_position_embeddings";
    }
  }
  return choice.path;
}

// One probe of a loaded model: each phase (batch sizes, sequence lengths, spatial sizes, the
// all-padding mask, batch invariance) adds its cases to the report.
class Prober {
 public:
  Prober(const Session& session, const ProbeOptions& o, ProbeReport& r)
      : session_(session), o_(o), r_(r), axes_(find_axes(session)),
        base_(r.max_length > 0 ? std::min(o.base_length, r.max_length) : o.base_length) {}

  void batch_sizes() {
    for (int64_t b : {1, 2, 3}) {
      const std::string name = axes_.dynamic_sequence
                                   ? "batch " + std::to_string(b) + " x sequence " + std::to_string(base_)
                                   : "batch " + std::to_string(b) + " (other dynamic dims " + std::to_string(o_.other_dim) + ")";
      if (!axes_.dynamic_batch && b != 1) r_.cases.push_back({name, ProbeStatus::kSkip, "batch axis is fixed"});
      else r_.cases.push_back(run_case(name, b, base_, false));
    }
  }

  void sequence_lengths() {
    if (!axes_.dynamic_sequence) {
      r_.cases.push_back({"sequence lengths", ProbeStatus::kSkip, "no dynamic sequence axis (dim 1) on the inputs"});
      return;
    }
    std::vector<std::pair<int64_t, std::string>> lengths = {{1, "1"}, {2, "2"}};
    if (r_.max_length > 2) {
      lengths.push_back({r_.max_length - 1, "max-1"});
      lengths.push_back({r_.max_length, "max"});
    }
    int64_t last_pass = 0, first_fail = 0;
    for (const auto& [len, label] : lengths) {
      auto c = run_case("sequence length " + std::to_string(len) + " (" + label + ")", 1, len, false);
      if (c.status == ProbeStatus::kPass && first_fail == 0) last_pass = len;
      if (c.status == ProbeStatus::kFail && first_fail == 0) first_fail = len;
      r_.cases.push_back(c);
    }
    if (first_fail > 0 && last_pass > 0 && last_pass < first_fail) bisect_length(last_pass, first_fail);
    if (r_.max_length > 0)
      r_.cases.push_back(run_case("sequence length " + std::to_string(r_.max_length + 1) + " (max+1)", 1, r_.max_length + 1, true));
    else
      r_.cases.push_back({"sequence length max+1", ProbeStatus::kSkip, "maximum length unknown: pass --max-length"});
  }

  // Odd sizes and sizes that are not multiples of the usual strides break many CNN exports.
  void spatial_sizes() {
    if (!has_spatial_input(session_)) return;
    int64_t first_fail = 0;
    std::string why;
    const size_t first_case = r_.cases.size();
    for (int64_t size : {32, 31, 33, 1, 100}) {
      auto c = run_case("dynamic dims >= 2 at " + std::to_string(size), 1, base_, false, false, size);
      if (c.status == ProbeStatus::kFail && first_fail == 0) {
        first_fail = size;
        why = c.detail;
      }
      r_.cases.push_back(c);
    }
    if (first_fail > 0) spatial_pattern(first_case, first_fail, why);
  }

  void all_padding_mask() {
    if (has_mask_input(session_)) r_.cases.push_back(run_case("all-padding attention mask", 2, base_, false, /*zero_mask=*/true));
    else r_.cases.push_back({"all-padding attention mask", ProbeStatus::kSkip, "model has no input named *mask*"});
  }

  // Row i of a batch of 3 equals the single run of row i.
  Status batch_invariance() {
    if (!axes_.dynamic_batch) return {};
    ProbeCase c{"batch invariance (3 rows vs single runs)", ProbeStatus::kPass, {}};
    for (const auto& in : session_.inputs())
      if (in.dtype == DataType::kString) {
        r_.cases.push_back({c.name, ProbeStatus::kSkip, "input '" + in.name + "' holds strings, which are not split by rows"});
        return {};
      }
    auto batched_in = make_inputs(session_, 3, base_, o_.seed + 1, o_.other_dim);
    auto batched = batched_in.ok() ? session_.run(*batched_in) : Result<std::vector<NamedTensor>>(batched_in.error());
    if (!batched.ok()) {
      c = {c.name, ProbeStatus::kFail, batched.error().to_string()};
    } else {
      double worst = 0;
      for (int64_t row = 0; row < 3 && c.status == ProbeStatus::kPass; ++row)
        GB_RETURN_IF_ERROR(compare_row(*batched_in, *batched, row, c, worst));
      if (c.status == ProbeStatus::kPass) c.detail = "max abs difference " + std::to_string(worst);
    }
    r_.cases.push_back(c);
    return {};
  }

 private:
  ProbeCase run_case(const std::string& name, int64_t batch, int64_t seq, bool expect_failure, bool zero_mask = false,
                     int64_t other = 0) const {
    ProbeCase c{name, ProbeStatus::kPass, {}};
    auto inputs = make_inputs(session_, batch, seq, o_.seed, other > 0 ? other : o_.other_dim, zero_mask);
    if (!inputs.ok()) return ProbeCase{name, ProbeStatus::kSkip, inputs.error().to_string()};
    auto outs = session_.run(*inputs);
    if (expect_failure) {
      if (!outs.ok()) c.detail = "refused cleanly: " + outs.error().to_string();
      else c = {name, ProbeStatus::kWarn, "accepted: the model ran past its declared maximum; check its outputs"};
      return c;
    }
    if (!outs.ok()) return ProbeCase{name, ProbeStatus::kFail, outs.error().to_string()};
    const std::string bad = non_finite(*outs);
    if (!bad.empty()) return ProbeCase{name, ProbeStatus::kFail, "non-finite output: " + bad};
    c.detail = "ran, outputs finite";
    return c;
  }

  // The shortest failing length between a passing and a failing one.
  void bisect_length(int64_t lo, int64_t hi) {
    std::string why;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      auto c = run_case("", 1, mid, false);
      if (c.status == ProbeStatus::kPass) {
        lo = mid;
      } else {
        hi = mid;
        why = c.detail;
      }
    }
    if (why.empty()) why = "see the failing case above";
    r_.cases.push_back({"first failing sequence length", ProbeStatus::kFail,
                        "length " + std::to_string(hi) + " is the shortest that fails (" + std::to_string(lo) + " runs): " + why});
  }

  // Which sizes in 1..64 run: the pattern is what users need. All sizes from some minimum on is a
  // documented-style constraint (WARN: too small inputs are refused by the graph); gaps (e.g. only
  // multiples of 32) are a FAIL: the declared shape accepts what breaks.
  void spatial_pattern(size_t first_case, int64_t first_fail, const std::string& why) {
    std::vector<int64_t> ok;
    for (int64_t size = 1; size <= 64; ++size)
      if (run_case("", 1, base_, false, false, size).status == ProbeStatus::kPass) ok.push_back(size);
    const bool from_minimum = !ok.empty() && ok.back() == 64 && ok.size() == static_cast<size_t>(64 - ok.front() + 1);
    std::string list;
    for (size_t k = 0; k < ok.size() && k < 16; ++k) list += (k ? "," : "") + std::to_string(ok[k]);
    if (ok.size() > 16) list += ",...";
    if (from_minimum) {
      for (size_t k = first_case; k < r_.cases.size(); ++k)
        if (r_.cases[k].status == ProbeStatus::kFail) r_.cases[k].status = ProbeStatus::kWarn;
      r_.cases.push_back({"spatial sizes 1..64 that run", ProbeStatus::kWarn,
                          "every size from " + std::to_string(ok.front()) + " on runs; smaller ones fail in the graph, e.g. " +
                              std::to_string(first_fail) + ": " + why});
    } else {
      r_.cases.push_back({"spatial sizes 1..64 that run", ProbeStatus::kFail,
                          std::to_string(ok.size()) + " of 64 run (" + (list.empty() ? "none" : list) + "); e.g. size " +
                              std::to_string(first_fail) + " fails: " + why});
    }
  }

  // Row `row` run alone against the batched run's row; a difference fails case `c`.
  Status compare_row(const std::vector<NamedTensor>& batched_in, const std::vector<NamedTensor>& batched, int64_t row,
                     ProbeCase& c, double& worst) const {
    std::vector<NamedTensor> single_in;
    for (const auto& t : batched_in) {
      GB_ASSIGN_OR_RETURN(Tensor one, copy_rows(t.tensor, row, 1));
      single_in.push_back({t.name, std::move(one)});
    }
    auto single = session_.run(single_in);
    if (!single.ok()) {
      c = {c.name, ProbeStatus::kFail, single.error().to_string()};
      return {};
    }
    for (size_t k = 0; k < single->size(); ++k) {
      const Tensor& full = batched[k].tensor;
      if (full.rank() == 0 || full.shape()[0] != 3) continue;  // output without a batch axis
      GB_ASSIGN_OR_RETURN(Tensor row_out, copy_rows(full, row, 1));
      auto d = compare_tensors(row_out, (*single)[k].tensor, o_.rtol, o_.atol);
      worst = std::max(worst, d.max_abs);
      if (!d.comparable || d.violations > 0) {
        c = {c.name, ProbeStatus::kFail,
             "row " + std::to_string(row) + " of output '" + (*single)[k].name + "' differs from its single run (max abs " +
                 std::to_string(d.max_abs) + ")"};
        return {};
      }
    }
    return {};
  }

  const Session& session_;
  const ProbeOptions& o_;
  ProbeReport& r_;
  const Axes axes_;
  const int64_t base_;
};

}  // namespace

Result<ProbeReport> probe_model(const std::string& path, const SessionOptions& session_options, const ProbeOptions& o) {
  ProbeReport r;
  GB_ASSIGN_OR_RETURN(r.model, resolve_model(path, o, r));
  GB_ASSIGN_OR_RETURN(Session session, Session::load(r.model, session_options));
  Prober probe(session, o, r);
  probe.batch_sizes();
  probe.sequence_lengths();
  probe.spatial_sizes();
  probe.all_padding_mask();
  GB_RETURN_IF_ERROR(probe.batch_invariance());
  // With a tokenizer: texts through the real pipeline.
  if (fs::is_directory(path) && fs::exists(fs::path(path) / "tokenizer.json") && o.text_cases) {
    auto st = probe_text_cases(path, session_options, r);
    if (!st.ok()) r.cases.push_back({"text cases (tokenizer + pipeline)", ProbeStatus::kFail,
                                     "the model directory does not load as a pipeline: " + st.error().to_string()});
  }
  return r;
}

nlohmann::ordered_json probe_to_json(const ProbeReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "glassbox.probe/1";
  j["model"] = r.model;
  j["max_length"] = r.max_length;
  j["max_length_source"] = r.max_length_source;
  j["ok"] = r.ok();
  auto cases = nlohmann::ordered_json::array();
  for (const auto& c : r.cases) cases.push_back({{"name", c.name}, {"status", probe_status_name(c.status)}, {"detail", c.detail}});
  j["cases"] = cases;
  return j;
}

std::string probe_to_text(const ProbeReport& r) {
  std::ostringstream s;
  s << "model       " << r.model << "\nmax length  " << (r.max_length > 0 ? std::to_string(r.max_length) : "unknown") << " ("
    << r.max_length_source << ")\n\n";
  for (const auto& c : r.cases) {
    std::string name = c.name;
    name.resize(std::max<size_t>(name.size(), 44), ' ');
    s << probe_status_name(c.status) << "  " << name << "  " << c.detail << "\n";
  }
  s << "\n" << (r.ok() ? "probe passed" : "probe FAILED") << "\n";
  return s.str();
}

}  // namespace glassbox::diag
