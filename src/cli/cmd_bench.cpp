// glassbox bench MODEL.onnx [--input NAME=FILE ...] [--shape NAME=1x128 ...] [--repeat N] [--warmup N]
//   [--threads N] [--opt-level L] [--sweep opt-level] [--json] [--output-dir DIR]
//   [--unpad-mask NAME [--unpad-multiple N] [--unpad-serial]]
#include <filesystem>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "diag/bench.h"
#include "glassbox/tensor_io.h"

namespace {

struct BenchArgs {
  std::string model;
  std::vector<std::string> inputs, shapes;
  glassbox::diag::BenchOptions bench;
  glassbox::cli::SessionFlags session;
  std::string sweep;
  bool json = false;
  std::string output_dir;  // empty: outputs are not written
  std::string unpad_mask;  // empty: padded runs
  bool unpad_serial = false;
  bool copy_initializers = false;  // SessionOptions::map_initializers = false
};

// Writes the last timed run's outputs as output_<i>.npy (for comparisons with a peer).
void write_outputs(const std::string& dir, const std::vector<glassbox::NamedTensor>& outputs) {
  using namespace glassbox;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    cli::fail("bench", make_error(ErrorCode::kIo, "cannot create --output-dir '" + dir + "': " + ec.message()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / ("output_" + std::to_string(i) + ".npy")).string();
    Status s = runtime::write_npy(path, outputs[i].tensor);
    if (!s.ok()) cli::fail("bench", std::move(s).take_error().with_where(path));
  }
}

void bench_command(const BenchArgs& a) {
  using namespace glassbox;
  SessionOptions opts;
  a.session.apply(opts);
  opts.map_initializers = !a.copy_initializers;
  diag::BenchOptions bench = a.bench;
  if (!a.unpad_mask.empty()) {
    bench.unpadded = true;
    bench.unpad.mask_input = a.unpad_mask;
    bench.unpad.sequences_in_parallel = !a.unpad_serial;
  } else if (a.unpad_serial || bench.unpad.length_multiple != 1) {
    cli::fail("bench", make_error(ErrorCode::kInvalidArgument, "--unpad-multiple and --unpad-serial need --unpad-mask NAME"));
  }
  if (a.sweep.empty()) {
    auto r = diag::bench_model(a.model, opts, a.inputs, a.shapes, bench);
    if (!r.ok()) cli::fail("bench", r.error());
    if (!a.output_dir.empty()) write_outputs(a.output_dir, r->outputs);
    if (a.json) std::cout << diag::bench_to_json(*r).dump(2) << "\n";
    else std::cout << diag::bench_to_text(*r);
    return;
  }
  if (a.sweep != "opt-level")
    cli::fail("bench", make_error(ErrorCode::kInvalidArgument, "--sweep '" + a.sweep + "' is unknown", {}, "use --sweep opt-level"));
  // The seeds' ORT_DISABLE_ALL -> BASIC -> EXTENDED walk: same inputs at every level, deviation vs level 0.
  nlohmann::ordered_json levels = nlohmann::ordered_json::array();
  std::vector<NamedTensor> reference;
  for (int level = 0; level <= 2; ++level) {
    opts.opt_level = level;
    auto r = diag::bench_model(a.model, opts, a.inputs, a.shapes, bench);
    if (!r.ok()) cli::fail("bench", std::move(r).take_error().with_where("opt-level " + std::to_string(level)));
    double max_abs = 0, max_rel = 0;
    if (level == 0) reference = r->outputs;
    for (size_t i = 0; i < reference.size() && i < r->outputs.size(); ++i) {
      auto d = diag::compare_tensors(reference[i].tensor, r->outputs[i].tensor);
      max_abs = std::max(max_abs, d.comparable ? d.max_abs : INFINITY);
      max_rel = std::max(max_rel, d.comparable ? d.max_rel : INFINITY);
    }
    auto j = diag::bench_to_json(*r);
    j["max_abs_diff_vs_level0"] = max_abs;
    j["max_rel_diff_vs_level0"] = max_rel;
    if (!a.json)
      std::cout << "opt-level " << level << ": load " << r->load_ms << " ms, p50 " << r->p50 << " ms, p95 " << r->p95
                << " ms, max |diff| vs level 0 " << max_abs << " (rel " << max_rel << ")\n";
    levels.push_back(j);
  }
  if (a.json) std::cout << nlohmann::ordered_json{{"schema", "glassbox.bench.sweep/1"}, {"levels", levels}}.dump(2) << "\n";
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure load time, first-run latency, p50/p95/p99, peak RSS, arena bytes, GFLOP/s "
                                          "and a per-op-type profile");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("model", a->model, "ONNX model file")->required();
  cmd->add_option("--input", a->inputs, "NAME=FILE (.pb or .npy); repeat per input");
  cmd->add_option("--shape", a->shapes,
                  std::string("NAME=1x128: generate this input with the declared fill rule (") +
                      glassbox::diag::generated_fill_rule() + ")");
  cmd->add_option("--repeat", a->bench.repeat, "timed runs (default 20)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", a->bench.warmup, "untimed runs after the first (default 3)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", a->bench.seed, "seed of generated inputs (default 0)");
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kThreads, SessionFlag::kOptLevel, SessionFlag::kDisablePass,
                                                     SessionFlag::kPrecision, SessionFlag::kWeightsCache, SessionFlag::kPoolWait});
  cmd->add_flag("--copy-initializers", a->copy_initializers,
                "copy every weight into memory instead of viewing the mapped file (SessionOptions::map_initializers = false)");
  cmd->add_option("--sweep", a->sweep, "'opt-level': measure at every level and show the deviation from level 0 (default: off)");
  cmd->add_option("--output-dir", a->output_dir,
                  "write the last timed run's outputs there as output_<i>.npy (default: not written)");
  cmd->add_flag("--check-numerics", a->bench.check_numerics,
                 "time the runs with the NaN/Inf checker of `run --check-numerics` attached, to measure its cost "
                 "(default: off)");
  cmd->add_option("--unpad-mask", a->unpad_mask,
                  "run with Session::run_unpadded: NAME is the [batch, seq] mask of a right-padded batch; each "
                  "sequence runs on its real length (default: off, the padded batch runs as given)");
  cmd->add_option("--unpad-multiple", a->bench.unpad.length_multiple,
                  "with --unpad-mask: round each length up to this multiple (default 1 = exact)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--unpad-serial", a->unpad_serial,
                "with --unpad-mask: one sequence at a time on all threads instead of one sequence per thread "
                "(default: off)");
  cmd->add_flag("--json", a->json, "print the stable JSON report (schema glassbox.bench/1; default: text)");
  cmd->callback([a] { bench_command(*a); });
}
