// glassbox probe MODEL.onnx|MODEL_DIR [--max-length N] [--json]
#include <iostream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "diag/probe.h"

void add_probe_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "probe", "Destructive tests on purpose: batch sizes 1/2/odd, sequence lengths 1, 2, max-1, max, max+1 (must fail "
               "cleanly), all-padding masks, finite and batch-invariant outputs; on a model directory with tokenizer.json also "
               "texts of max-1..max+3 tokens, empty/whitespace/control/combining/emoji/invalid-UTF-8/1 MB texts and the "
               "unknown-token rate; exit 1 on any FAIL");
  struct Args {
    std::string path;
    glassbox::diag::ProbeOptions probe;
    glassbox::cli::SessionFlags session;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("model", a->path, "ONNX file, or a model directory with model.onnx and config.json")->required();
  cmd->add_option("--max-length", a->probe.max_length,
                  "longest sequence the model accepts (default: config.json max_position_embeddings, else unknown)");
  cmd->add_option("--base-length", a->probe.base_length, "sequence length of the batch-size cases (default 8)");
  cmd->add_option("--other-dim", a->probe.other_dim, "size of other dynamic dims such as image height/width (default 64)");
  glassbox::cli::add_session_flags(cmd, a->session, {glassbox::cli::SessionFlag::kThreads});
  cmd->add_option("--seed", a->probe.seed, "seed of generated inputs (default 0)");
  cmd->add_flag("!--no-text-cases", a->probe.text_cases,
                 "skip the tokenizer-driven text cases on a model directory (default: run them when tokenizer.json exists)");
  cmd->add_flag("--json", a->json, "print JSON (schema glassbox.probe/1; default: a table)");
  cmd->callback([a] {
    glassbox::SessionOptions opts;
    a->session.apply(opts);
    auto r = glassbox::diag::probe_model(a->path, opts, a->probe);
    if (!r.ok()) glassbox::cli::fail("probe", r.error());
    if (a->json) std::cout << glassbox::diag::probe_to_json(*r).dump(2) << "\n";
    else std::cout << glassbox::diag::probe_to_text(*r);
    if (!r->ok()) throw CLI::RuntimeError(1);
  });
}
