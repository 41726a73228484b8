// `glassbox` entry point: registers every subcommand listed in commands.inc.
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "glassbox/process.h"
#include "glassbox/version.h"

int main(int argc, char** argv) {
  CLI::App app{"glassbox: ONNX inference and Hugging Face tokenizers with no hidden defaults"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("glassbox ") + glassbox::version());
  glassbox::ProcessOptions process;
  auto* heap = app.add_option("--heap-policy", process.heap_policy,
                              "retain (default): freed tensor memory stays in the heap for reuse; system: glibc's defaults")
                   ->check(CLI::IsMember({"retain", "system"}));
  // Applied before any subcommand runs (CLI11 runs this callback right after parsing, before the subcommand's).
  app.parse_complete_callback([&] {
    auto st = glassbox::apply_process_options(process, heap->count() ? "flag" : "default");
    if (!st.ok()) glassbox::cli::fail("glassbox", st.error());
  });
#define GB_COMMAND(name) add_##name##_command(app);
#include "cli/commands.inc"
#undef GB_COMMAND
  CLI11_PARSE(app, argc, argv);
  return 0;
}
