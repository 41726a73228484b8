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
  int64_t run() const { return first_run + arena_counted; }
  int64_t total() const { return baseline + tokenizer + weights + run(); }
};

struct BudgetedPipeline {
  Pipeline pipeline;
  std::optional<MemoryEstimate> estimate;  // with a budget (or when asked for)
  std::vector<Derivation> rows;            // max_memory and, with an estimate, the breakdown (explain prints them)
};

// Loads `dir` under its budget: `flag_budget` (bytes; 0 = not given) > glassbox.json "max_memory" > off.
// With a budget (or `always_estimate`), dry-runs the largest declared shape, batch_size x max_length
// unless `shape` ({batch, tokens}; tokens 0 = max_length) declares one, and refuses a model whose estimate exceeds it.
Result<BudgetedPipeline> load_with_budget(const std::string& dir, const PipelineOptions& options, int64_t flag_budget,
                                          bool always_estimate = false,
                                          std::optional<std::pair<int64_t, int64_t>> shape = std::nullopt);

// The estimate of a loaded pipeline at batch x tokens (two dry runs through its session).
Result<MemoryEstimate> estimate_text_memory(const Pipeline& pipeline, int64_t batch, int64_t tokens, int64_t tokenizer_bytes,
                                            int64_t weights_bytes, int64_t budget);

// Refuses an estimate over its budget, naming every number; ok when under or without a budget.
Status check_memory_budget(const MemoryEstimate& e, const std::string& where);

// The breakdown as explain rows ("memory.weights", ...), each saying how it was counted.
std::vector<Derivation> memory_rows(const MemoryEstimate& e);

// glassbox.json's "max_memory" (bytes, or "512M"); 0 when absent. `where` names the file in errors.
Result<int64_t> budget_in_glassbox_json(const nlohmann::json& glassbox, const std::string& where);

// Bytes of the initializers of the ONNX file at `model_path` (as the loader maps or copies them).
Result<int64_t> initializer_bytes(const std::string& model_path);

// A bare model under a budget (`glassbox run --max-memory`): the bytes left for one run's tensors
// after the process baseline and the model's initializers (the run's SessionOptions::memory_limit_bytes:
// an allocation past it is refused before it happens); kLimitExceeded naming the numbers when none are.
Result<int64_t> run_tensor_budget(const std::string& model_path, int64_t budget);

// Resident-set growth while loading tokenizer.json at `path` once (the heap keeps what parsing used).
int64_t measure_tokenizer_bytes(const std::string& path);

}  // namespace glassbox::pipeline
