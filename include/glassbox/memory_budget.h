// The declared memory budget of a text pipeline (docs/memory.md): what the budget is and where it
// came from (flag --max-memory > glassbox.json "max_memory" > off), and the estimate checked against
// it at load: the process baseline and the tokenizer (measured), the weights (the model's
// initializers), and the run tensors of the largest declared shape (batch x tokens) from the
// engine's own accounting (RunStats) over two dry runs of that shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "glassbox/pipeline.h"

namespace glassbox::pipeline {

struct MemoryEstimate {
  int64_t batch = 0, tokens = 0;  // the declared largest shape of the dry runs
  int64_t baseline = 0;           // process resident set before any model loaded (binary, libraries): measured
  int64_t tokenizer = 0;          // resident-set growth while tokenizer.json loaded: measured
  int64_t weights = 0;            // the model's initializers (fp32 packing replaces the mapped pages it packs)
  int64_t first_run = 0;          // RunStats::peak_bytes of the shape's first run (tensor by tensor; the heap keeps it)
  int64_t arena = 0;              // RunStats::arena_bytes of the later runs (one arena of the static plan)
  int64_t arena_counted = 0;      // the part of `arena` counted on top of first_run (see run())
  int64_t budget = 0;             // 0 = none
  int64_t run_limit = 0;          // each run's tensors under the budget (the session's MemoryReport::run_limit); 0 = none
  int64_t run() const { return first_run + arena_counted; }
  int64_t total() const { return baseline + tokenizer + weights + run(); }
};

struct BudgetedPipeline {
  Pipeline pipeline;
  std::optional<MemoryEstimate> estimate;  // with a budget (or when asked for)
  std::vector<Derivation> rows;            // max_memory and, with an estimate, the breakdown (explain prints them)
};

// Loads `dir` under its budget: `flag_budget` (bytes; 0 = not given; `flag_source` says where it came from in
// explain) > glassbox.json "max_memory" > off. With a budget (or `always_estimate`), dry-runs the largest declared
// shape, batch_size x max_length unless `shape` ({batch, tokens}; tokens 0 = max_length) declares one, and refuses
// a model whose estimate exceeds it (the rule is the session's: SessionOptions::max_memory).
Result<BudgetedPipeline> load_with_budget(const std::string& dir, const PipelineOptions& options, int64_t flag_budget,
                                          bool always_estimate = false,
                                          std::optional<std::pair<int64_t, int64_t>> shape = std::nullopt,
                                          const std::string& flag_source = "flag --max-memory");

// The estimate of a loaded pipeline at batch x tokens: two dry runs through Session::check_memory, with the
// process (baseline + load growth) and the tokenizer as what it reserves; refused there when the pipeline's session
// has a budget (SessionOptions::max_memory) the estimate exceeds, naming every number.
Result<MemoryEstimate> estimate_text_memory(const Pipeline& pipeline, int64_t batch, int64_t tokens, int64_t process_bytes,
                                            int64_t tokenizer_bytes);

// The breakdown as explain rows ("memory.weights", ...), each saying how it was counted.
std::vector<Derivation> memory_rows(const MemoryEstimate& e);

// glassbox.json's "max_memory" (bytes, or "512M"); 0 when absent. `where` names the file in errors.
Result<int64_t> budget_in_glassbox_json(const nlohmann::json& glassbox, const std::string& where);

// Resident-set growth while loading tokenizer.json at `path` once (the heap keeps what parsing used).
int64_t measure_tokenizer_bytes(const std::string& path);

}  // namespace glassbox::pipeline
