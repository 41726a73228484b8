// The session flags shared by every verb that runs a model (run, bench, classify, embed, explain, accuracy,
// probe, conformance, generate …), declared once. Each flag's help text is built from the SessionOptions
// table that `glassbox explain` prints (src/diag/explain.cpp: default and reason), so `--help` and `explain`
// cannot say different things; tests/structure/test_cli_flags.py checks every subcommand against it.
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/pipeline.h"
#include "glassbox/session.h"

namespace glassbox::cli {

enum class SessionFlag { kThreads, kOptLevel, kDisablePass, kPrecision, kWeightsCache, kPoolWait, kMaxMemory };

// What the command line said; a flag not given stays unset, so the next source (glassbox.json, a config
// file, the option's default) decides.
struct SessionFlags {
  std::optional<int> threads;
  std::optional<int> opt_level;
  std::vector<std::string> disabled_passes;  // empty: not given
  std::optional<Precision> precision;
  std::optional<std::string> weights_cache;  // "" = off
  std::optional<PoolWait> pool_wait;
  // --max-memory (bytes): SessionOptions::max_memory; a model directory's pipeline (pipeline::load_with_budget)
  // passes it with the process and the tokenizer as what is reserved, `run` with the process.
  std::optional<int64_t> max_memory;

  // Writes every given flag into `o`; with `sources`, records "session.<field>" = "flag" for each.
  void apply(SessionOptions& o, std::map<std::string, std::string>* sources = nullptr) const;
  // The same for a pipeline: threads/opt-level/passes into its session options, precision, weights cache and
  // pool wait into the pipeline's own fields (which rank a flag above the model's glassbox.json).
  void apply(PipelineOptions& o) const;
};

// Declares the named flags on `cmd`, writing into `flags`.
void add_session_flags(CLI::App* cmd, SessionFlags& flags, std::initializer_list<SessionFlag> which);

// Every session flag: its name on the command line and the SessionOptions field it sets.
struct SessionFlagInfo {
  SessionFlag flag;
  const char* name;   // "--threads"
  const char* field;  // "threads"
};
const std::vector<SessionFlagInfo>& session_flag_infos();

}  // namespace glassbox::cli
