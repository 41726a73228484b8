// Helpers shared by the subcommand files of the `glassbox` binary.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "glassbox/error.h"
#include "glassbox/session.h"

namespace glassbox::cli {

// Prints "glassbox <verb>: <error>" to stderr and returns exit code 1 via CLI11.
[[noreturn]] inline void fail(const std::string& verb, const Error& e, int exit_code = 1) {
  std::cerr << "glassbox " << verb << ": " << e.to_string() << "\n";
  throw CLI::RuntimeError(exit_code);
}

// A model directory's ONNX file (glassbox::find_model_file): declared once for every verb that takes MODEL_DIR.
inline CLI::Option* add_model_file_option(CLI::App* cmd, std::optional<std::string>& target) {
  return cmd->add_option("--model-file", target,
                         "FILE: the ONNX file inside the model directory, e.g. onnx/model_quantized.onnx (default: "
                         "glassbox.json \"model_file\", else the fp32 model.onnx, then onnx/model.onnx; a directory with "
                         "only variants is an error listing them)");
}

inline Precision precision_or_fail(const std::string& verb, const std::string& text) {
  auto p = parse_precision(text);
  if (!p.ok()) fail(verb, p.error());
  return *p;
}

}  // namespace glassbox::cli

#define GB_COMMAND(name) void add_##name##_command(CLI::App& app);
#include "cli/commands.inc"
#undef GB_COMMAND
