// glassbox run MODEL.onnx --input NAME=FILE ... [--output-dir DIR] [--threads N]
//   [--opt-level 0|1|2] [--check-numerics] [--disable-pass NAME] [--memory-limit BYTES]
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "core/process_memory.h"
#include "diag/explain.h"
#include "glassbox/session.h"
#include "glassbox/numerics_checker.h"
#include "glassbox/tensor_io.h"

namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir = ".";
  glassbox::cli::SessionFlags session;
  bool check_numerics = false;
  int64_t memory_limit = glassbox::SessionOptions{}.memory_limit_bytes;
  bool log_passes = false;
};

// Strings are written as JSON strings (invalid UTF-8 replaced by U+FFFD: they are labels and categories).
nlohmann::json strings_json(const glassbox::Tensor& t) {
  nlohmann::json out = nlohmann::json::array();
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.string_data()[i]);
  return out;
}

// One output: a tensor -> .pb (+ .npy when numeric; string tensors: their strings in the summary, "data");
// a sequence of maps (ZipMap) -> output_<i>.json, a list of {key: value} objects (keys as JSON strings),
// plus the values as an [N, C] .npy and the keys in the summary.
glassbox::Result<nlohmann::json> write_output(const glassbox::NamedValue& o, const std::string& base) {
  using namespace glassbox;
  const Value& v = o.value;
  if (v.kind == Value::Kind::kMapSequence) {
    const Tensor& keys = v.map_keys;
    const Tensor& values = v.tensor;
    const int64_t c = keys.numel();
    const int64_t n = c ? values.numel() / c : 0;
    nlohmann::json key_list = keys.string_data() ? strings_json(keys) : nlohmann::json::array();
    if (!keys.string_data())
      for (int64_t j = 0; j < c; ++j) key_list.push_back(keys.data<int64_t>()[j]);
    nlohmann::ordered_json maps = nlohmann::ordered_json::array();
    for (int64_t r = 0; r < n; ++r) {
      nlohmann::ordered_json m = nlohmann::ordered_json::object();  // keys in label order
      for (int64_t j = 0; j < c; ++j) {
        const std::string k = keys.string_data() ? keys.string_data()[j] : std::to_string(keys.data<int64_t>()[j]);
        m[k] = values.data<float>()[r * c + j];
      }
      maps.push_back(std::move(m));
    }
    GB_RETURN_IF_ERROR(runtime::write_text_file(base + ".json", maps.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
    GB_RETURN_IF_ERROR(runtime::write_npy(base + ".npy", values));
    return nlohmann::json{{"name", o.name}, {"type", std::string("sequence<map<") + dtype_name(keys.dtype()) + ", float32>>"},
                          {"length", n}, {"keys", key_list}, {"json", base + ".json"}, {"npy", base + ".npy"}};
  }
  if (v.kind != Value::Kind::kTensor)
    return make_error(ErrorCode::kUnsupported, std::string("output '") + o.name + "' is a " + v.kind_name() +
                                                   "; `glassbox run` writes tensors and sequences of maps",
                      {}, "use the C++ API Session::run_values()");
  const Tensor& t = v.tensor;
  GB_RETURN_IF_ERROR(runtime::write_tensor_pb(base + ".pb", t, o.name));
  nlohmann::json entry = {{"name", o.name}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}, {"pb", base + ".pb"}};
  if (t.string_data()) entry["data"] = strings_json(t);
  if (!runtime::npy_descr(t.dtype()).empty()) {
    GB_RETURN_IF_ERROR(runtime::write_npy(base + ".npy", t));
    entry["npy"] = base + ".npy";
  }
  return entry;
}

void run_command(const RunArgs& a) {
  using namespace glassbox;
  SessionOptions opts;
  a.session.apply(opts);
  opts.memory_limit_bytes = a.memory_limit;
  opts.log_passes = a.log_passes;
  // docs/memory.md: with --max-memory (applied above) the session refuses a model whose weights the process leaves
  // no room for, and bounds each run's tensors by what they leave.
  if (opts.max_memory > 0) opts.max_memory_reserved = process_baseline_rss_bytes();
  auto session = Session::load(a.model, opts);
  if (!session.ok()) cli::fail("run", session.error());
  if (a.check_numerics) session->set_observer(runtime::make_numerics_checker());
  std::vector<NamedValue> inputs;
  for (const auto& spec : a.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      cli::fail("run", make_error(ErrorCode::kInvalidArgument, "--input '" + spec + "' is not NAME=FILE"));
    const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    auto t = runtime::read_tensor_file(file);
    if (!t.ok()) cli::fail("run", std::move(t).take_error().with_where("--input " + name));
    inputs.push_back({name, Value::of(std::move(t->tensor))});
  }
  RunStats stats;
  auto outs = session->run_values(inputs, &stats);
  if (!outs.ok()) cli::fail("run", outs.error());
  std::error_code ec;
  std::filesystem::create_directories(a.output_dir, ec);
  nlohmann::json summary;
  summary["model"] = a.model;
  summary["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < outs->size(); ++i) {
    const auto& o = (*outs)[i];
    const std::string base = (std::filesystem::path(a.output_dir) / ("output_" + std::to_string(i))).string();
    auto entry = write_output(o, base);
    if (!entry.ok()) cli::fail("run", entry.error());
    summary["outputs"].push_back(std::move(entry).value());
  }
  summary["time_ms"] = static_cast<double>(stats.elapsed.count()) / 1e6;
  summary["threads"] = session->options().threads;
  summary["opt_level"] = session->options().opt_level;
  summary["precision"] = precision_name(session->options().precision);
  summary["nodes"] = session->node_count();
  summary["peak_bytes"] = stats.peak_bytes;
  if (!session->options().weights_cache.empty()) summary["weights_cache"] = diag::weights_cache_to_json(session->weights_cache_report());
  std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run an ONNX model on input tensors (.pb or .npy) and write its outputs");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("model", a->model, "ONNX model file")->required();
  cmd->add_option("--input", a->inputs, "NAME=FILE: a model input from an ONNX TensorProto (.pb) or NumPy (.npy) file; repeat per input");
  cmd->add_option("--output-dir", a->output_dir, "where output_<i>.pb and output_<i>.npy are written (default: current directory)");
  cmd->add_flag("--check-numerics", a->check_numerics, "stop at the first node that produces NaN/Inf and name it");
  cmd->add_option("--memory-limit", a->memory_limit, "bytes the tensors of one run may occupy at once (default 16 GiB)");
  cmd->add_flag("--log-passes", a->log_passes, "print what each graph pass changed to stderr");
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kThreads, SessionFlag::kOptLevel, SessionFlag::kDisablePass,
                                                     SessionFlag::kPrecision, SessionFlag::kWeightsCache, SessionFlag::kPoolWait,
                                                     SessionFlag::kMaxMemory});
  cmd->callback([a] { run_command(*a); });
}
