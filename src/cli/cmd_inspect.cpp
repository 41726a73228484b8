// glassbox inspect MODEL.onnx [--json]
#include <iostream>

#include "cli/cli_common.h"
#include "diag/inspect.h"
#include "graph/loader.h"

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Report what an ONNX model contains and what to check before deploying it");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("model", *path, "ONNX model file")->required();
  cmd->add_flag("--json", *json, "print the stable JSON report (schema glassbox.inspect/1, see docs/inspect.md); default: a table");
  cmd->callback([path, json] {
    glassbox::graph::LoadOptions opts;
    opts.checker_failure_is_error = false;  // inspect reports checker findings instead of refusing
    auto model = glassbox::graph::load_model(*path, opts);
    if (!model.ok()) glassbox::cli::fail("inspect", model.error());
    auto report = glassbox::diag::inspect_model(*model);
    if (*json) std::cout << glassbox::diag::inspect_to_json(report).dump(2) << "\n";
    else std::cout << glassbox::diag::inspect_to_text(report);
  });
}
