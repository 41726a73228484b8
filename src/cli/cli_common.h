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

// --precision fp32|bf16|int8-dynamic (SessionOptions::precision), checked when parsed.
inline CLI::Option* add_precision_option(CLI::App* cmd, std::string& target) {
  return cmd
      ->add_option("--precision", target,
                   "fp32 | bf16 (GEMMs on constant weights in bfloat16, fp32 accumulation: faster, outputs change "
                   "~1e-2 relative; measure with `glassbox accuracy`) | int8-dynamic (weights int8 per output channel, "
                   "activations uint8 per row per call, int32 sums: faster still, outputs change more) "
                   "(default fp32: the exported model's arithmetic)")
      ->check([](const std::string& v) { return parse_precision(v).ok() ? std::string() : parse_precision(v).error().to_string(); });
}

// --weights-cache DIR (SessionOptions::weights_cache): the packed-weights cache directory.
inline CLI::Option* add_weights_cache_option(CLI::App* cmd, std::string& target) {
  return cmd->add_option("--weights-cache", target,
                         "DIR: write the packed GEMM weights there after the first run and map them on later loads "
                         "(a stale or corrupt file is rebuilt; `glassbox explain --weights-cache DIR MODEL` shows hit/miss) "
                         "(default: off)");
}

// --pool-wait auto|spin|sleep (SessionOptions::pool_wait), checked when parsed.
// A model directory's ONNX file (glassbox::find_model_file): declared once for every verb that takes MODEL_DIR.
inline CLI::Option* add_model_file_option(CLI::App* cmd, std::optional<std::string>& target) {
  return cmd->add_option("--model-file", target,
                         "FILE: the ONNX file inside the model directory, e.g. onnx/model_quantized.onnx (default: "
                         "glassbox.json \"model_file\", else the fp32 model.onnx, then onnx/model.onnx; a directory with "
                         "only variants is an error listing them)");
}

inline CLI::Option* add_pool_wait_option(CLI::App* cmd, std::string& target) {
  return cmd
      ->add_option("--pool-wait", target,
                   "auto | spin | sleep: how idle pool threads wait for the next op during a run; auto polls up to "
                   "200 us only while the machine has an idle core, spin always, sleep never (default: auto)")
      ->check([](const std::string& v) { return parse_pool_wait(v).ok() ? std::string() : parse_pool_wait(v).error().to_string(); });
}

inline PoolWait pool_wait_or_fail(const std::string& verb, const std::string& text) {
  auto w = parse_pool_wait(text);
  if (!w.ok()) fail(verb, w.error());
  return *w;
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
