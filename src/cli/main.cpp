// `glassbox` entry point: registers every subcommand listed in commands.inc.
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"

int main(int argc, char** argv) {
  CLI::App app{"glassbox: ONNX inference and Hugging Face tokenizers with no hidden defaults"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "glassbox 0.1.0");
#define GB_COMMAND(name) add_##name##_command(app);
#include "cli/commands.inc"
#undef GB_COMMAND
  CLI11_PARSE(app, argc, argv);
  return 0;
}
