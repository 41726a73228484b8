// The memory budget a served model loads under (docs/memory.md, "Serving"): the tighter of its own
// (server.model_max_memory > glassbox.json "max_memory") and what the server's max_memory leaves after the
// models already loaded; and the explain rows that say which and why. Each loaded model's account (its
// estimate less the process) is what the repository sums for the server-wide budget.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "glassbox/error.h"
#include "glassbox/session.h"
#include "server/server_options.h"

namespace glassbox::server {

struct ModelBudget {
  int64_t bytes = 0;        // what the model's session and pipeline check against; 0 = no budget
  int64_t own = 0;          // the model's own budget (0 = none) and where it was declared
  std::string own_source;
  int64_t server = 0;       // ServerOptions::max_memory (0 = off)
  int64_t others = 0;       // the accounts of the models already loaded (server-wide)
  std::string source() const;  // the rule's outcome in words, for explain and refusals
};

// The budget of model `name` in `dir` when `others` bytes are taken by the models already loaded.
Result<ModelBudget> model_budget(const std::string& name, const std::string& dir, const ServerOptions& options, int64_t others);

// A budget refusal, with where the budget came from appended (the repository index and the log show it).
Error with_budget_source(Error e, const ModelBudget& b);

// The budget's explain rows: max_memory (value, source) and, under a server budget, the server's account.
nlohmann::json budget_rows(const ModelBudget& b);

// A generation model's KV budget (docs/memory.md, "Generation and the KV cache") and where it came from:
// kv_cache_bytes when declared (flag or config), else under a model budget a quarter of what that budget leaves
// after the process (kKvShareOfBudget), else the declared default kv_cache_bytes.
struct KvBudget {
  int64_t bytes = 0;
  std::string source;
};
// The quarter: a decode step holds the cache (1), the past copied into its feeds (up to 1 more), the present
// outputs of the same size (the run's tensors) plus logits and activations; 1/4 each for the cache and the
// feeds leaves half of what the process leaves for the weights and the runs.
inline constexpr int64_t kKvShareOfBudget = 4;
// ServerOptions::kv_cache_bytes in the repository's copy when it was not declared.
inline constexpr int64_t kKvDerived = -1;
KvBudget kv_budget_for(const ModelBudget& b, const ServerOptions& options);

// At serve start (call it when kv_cache_bytes was declared): a kv_cache_bytes whose cache and past feeds (2 x kv_cache_bytes) with the process exceed
// the server's max_memory can never load a generation model: refused, naming the numbers. Ok without a budget.
Status check_kv_budget_at_start(const ServerOptions& options);

// A generation model's check (weights + KV cache + past feeds + run tensors <= budget): the session options it
// loads under (max_memory; the process, the KV budget and the feeds' bound, the KV budget again, as reserved).
void apply_generation_budget(SessionOptions& session, const ModelBudget& b, int64_t kv_budget_bytes);

// The explain rows of a session's account (SessionOptions::max_memory: weights, run limit, the last dry run); with
// a KV budget (>= 0) also memory.kv_cache and memory.kv_feeds, and `kv_source` says where the KV budget came from.
// A measured part of a session's account beside the process (a load's growth, a decoder's first use), already in
// the session's reserved figure (Session::set_reserved): its own row, subtracted from memory.process.
struct MeasuredPart {
  const char* field = "";
  int64_t bytes = 0;
  std::string why;
};
nlohmann::json session_memory_rows(const MemoryReport& r, int64_t kv_budget_bytes = -1, const std::string& kv_source = "",
                                   const MeasuredPart& measured = {});
// What a load left resident beyond the model's weights: the resident set now less `rss_before_load` and the
// weights, at least 0 (mapped weights the load did not touch are not resident yet: counted in the weights).
int64_t measured_load_growth(int64_t rss_before_load, int64_t weights);

}  // namespace glassbox::server
