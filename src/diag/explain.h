// `glassbox explain`: every effective option of every component, with its value,
// where the value came from (default / file / flag), why that default, and the
// risk of changing it. The tables in explain.cpp are the single place reasons
// live; a static_assert keeps each table in step with its options struct.
#pragma once

#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/cpu.h"
#include "glassbox/pipeline.h"
#include "glassbox/session.h"
#include "glassbox/tokenizer.h"
#include "graph/loader.h"

namespace glassbox::diag {

struct OptionExplanation {
  std::string component;  // "session", "load", "encode"
  std::string name;       // field name as in the struct and the config file
  std::string value;      // effective value, as text
  std::string default_value;
  std::string source;     // "default", "file", "flag", "derived"
  std::string reason;     // why the default is what it is
  std::string risk;       // what can go wrong when it is changed (or kept)
};

struct EffectiveOptions {
  SessionOptions session;
  graph::LoadOptions load;
  EncodeOptions encode;
  UnpadOptions unpad;  // Session::run_unpadded (pipelines with unpadded_batches)
  // component.name -> source for values that did not come from the default.
  std::map<std::string, std::string> sources;
};

// Applies a JSON config {"session": {...}, "load": {...}, "encode": {...}} (source "file").
// Unknown components or keys are errors naming the key.
Status apply_config(const nlohmann::json& config, EffectiveOptions& options);

std::vector<OptionExplanation> explain_options(const EffectiveOptions& options);
// One SessionOptions field's table entry (default as text, reason, risk): what the CLI's session flags
// print as their help, so --help and explain say the same. nullopt for an unknown field name.
struct OptionDoc {
  std::string default_value;
  std::string reason;
  std::string risk;
};
std::optional<OptionDoc> session_option_doc(const std::string& name);
// The CLI process's own settings (glassbox/process.h), as the CLI applied them; a library
// user's explain has no such rows (the library never changes its host's allocator).
std::vector<OptionExplanation> explain_process_options();
std::string explain_to_text(const std::vector<OptionExplanation>& rows);
std::string explain_to_markdown(const std::vector<OptionExplanation>& rows);
nlohmann::ordered_json explain_to_json(const std::vector<OptionExplanation>& rows);

// What a loaded model adds to explain: its pipeline decisions (empty for a bare graph), the op
// decisions made at load, and the weights cache's state.
struct ModelExplanation {
  std::vector<Derivation> decisions;
  std::vector<OpDecision> op_choices;
  WeightsCacheReport cache;
};
// The rows (explain_to_json) plus "pipeline" (each decision's field, value, source, and risk when
// nothing declared it), "op_decisions" and "weights_cache" (when the cache is on or was refused):
// the one builder of the CLI's `explain --json MODEL` and the server's explain of a loaded model.
nlohmann::ordered_json explain_model_json(const std::vector<OptionExplanation>& rows, const ModelExplanation& model);

// The packed-weights cache's state of a loaded session (SessionOptions::weights_cache):
// where the file is, hit / miss / rebuilt (with what was stale or corrupt) / unavailable.
nlohmann::ordered_json weights_cache_to_json(const WeightsCacheReport& r);
std::string weights_cache_to_text(const WeightsCacheReport& r);  // indented lines, "" when off and unset

// This CPU's features, oneDNN's ISA, the kernel family of each op class and the precision rule's
// verdict per precision (glassbox::cpu_report()): `glassbox explain` (text, JSON) and the
// server's GET /v2 ("cpu"). Not in the Markdown table: docs/decisions.md is machine-independent.
nlohmann::ordered_json cpu_report_to_json(const CpuReport& r);
std::string cpu_report_to_text(const CpuReport& r);

}  // namespace glassbox::diag
