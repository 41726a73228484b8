// glassbox diff MODEL.onnx --input ... [--a CONFIG] [--b CONFIG | --b-model OTHER.onnx | --reference DIR]
#include <iostream>

#include "cli/cli_common.h"
#include "diag/diff.h"

namespace {

struct DiffArgs {
  std::string model, a = "opt-level=0", b = "opt-level=2", b_model, reference, dump;
  std::vector<std::string> inputs, shapes;
  double rtol = 1e-4, atol = 1e-5;
  uint64_t seed = 0;
  size_t max_rows = 40;
  bool json = false;
};

void diff_command(const DiffArgs& a) {
  using namespace glassbox;
  auto fail = [](const Error& e) { cli::fail("diff", e); };
  auto a_opts = diag::parse_config(a.a, {});
  if (!a_opts.ok()) fail(a_opts.error());
  auto sa = Session::load(a.model, *a_opts);
  if (!sa.ok()) fail(sa.error());
  auto inputs = diag::prepare_inputs(*sa, a.inputs, a.shapes, a.seed, nullptr);
  if (!inputs.ok()) fail(inputs.error());
  auto ca = diag::capture_run(*sa, *inputs);
  if (!ca.ok()) fail(std::move(ca).take_error().with_where("A"));
  std::map<std::string, Tensor> b_tensors;
  std::string b_label;
  if (!a.reference.empty()) {
    auto ref = diag::read_reference_dir(a.reference);
    if (!ref.ok()) fail(ref.error());
    b_tensors = std::move(ref).value();
    b_label = "reference tensors in " + a.reference;
  } else {
    const std::string b_model = a.b_model.empty() ? a.model : a.b_model;
    auto b_opts = diag::parse_config(a.b, {});
    if (!b_opts.ok()) fail(b_opts.error());
    auto sb = Session::load(b_model, *b_opts);
    if (!sb.ok()) fail(std::move(sb).take_error().with_where("B"));
    auto cb = diag::capture_run(*sb, *inputs);
    if (!cb.ok()) fail(std::move(cb).take_error().with_where("B"));
    if (!a.dump.empty()) {
      Status s = diag::dump_capture(*cb, a.dump + "/b");
      if (!s.ok()) fail(s.error());
    }
    b_tensors = std::move(cb->tensors);
    b_label = b_model + " [" + a.b + "]";
  }
  if (!a.dump.empty()) {
    Status s = diag::dump_capture(*ca, a.dump + "/a");
    if (!s.ok()) fail(s.error());
  }
  auto report = diag::diff_captures(*ca, b_tensors, a.rtol, a.atol);
  report.a_label = a.model + " [" + a.a + "]";
  report.b_label = b_label;
  if (a.json) std::cout << diag::diff_to_json(report).dump(2) << "\n";
  else std::cout << diag::diff_to_text(report, a.max_rows);
  if (report.compared == 0) fail(make_error(ErrorCode::kNotFound, "the two runs share no tensor names", {},
                                            "check that --reference files are named after the model's tensors"));
  if (report.first_exceeding >= 0) throw CLI::RuntimeError(3);  // exit 3: a divergence was found
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "diff", "Compare two runs tensor by tensor in execution order and name the first node whose error exceeds the "
              "tolerance (exit 3 when one does)");
  auto a = std::make_shared<DiffArgs>();
  cmd->add_option("model", a->model, "ONNX model file (run A)")->required();
  cmd->add_option("--input", a->inputs, "NAME=FILE (.pb or .npy); repeat per input");
  cmd->add_option("--shape", a->shapes, "NAME=1x128: generate this input (see `glassbox bench --help` for the fill rule)");
  cmd->add_option("--seed", a->seed, "seed of generated inputs (default 0)");
  cmd->add_option("--a", a->a, "configuration of run A: opt-level=N,threads=N,disable-pass=NAME,memory-plan=on|off,precision=fp32|bf16|int8-dynamic (default opt-level=0)");
  cmd->add_option("--b", a->b, "configuration of run B, same keys (default opt-level=2)");
  auto* bm = cmd->add_option("--b-model", a->b_model, "run B on this other model (e.g. a quantized copy) instead of MODEL");
  cmd->add_option("--reference", a->reference,
                  "compare A against reference tensors in DIR (<tensor_name>.npy or .pb, names as in --dump)")
      ->excludes(bm);
  cmd->add_option("--rtol", a->rtol, "relative tolerance (default 1e-4)");
  cmd->add_option("--atol", a->atol, "absolute tolerance (default 1e-5)");
  cmd->add_option("--dump", a->dump, "write every intermediate tensor to DIR/a and DIR/b (default: off)");
  cmd->add_option("--max-rows", a->max_rows, "rows of the text table (default 40; the first divergence is always shown)");
  cmd->add_flag("--json", a->json, "print JSON (schema glassbox.diff/1; default: text)");
  cmd->callback([a] { diff_command(*a); });
}
