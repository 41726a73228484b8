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

// A generation model's check (weights + KV budget + run tensors <= budget): the session options it loads
// under (max_memory, and the process and the KV budget as reserved).
void apply_generation_budget(SessionOptions& session, const ModelBudget& b, int64_t kv_budget_bytes);

// The explain rows of a session's account (SessionOptions::max_memory: weights, run limit, the last dry run).
nlohmann::json session_memory_rows(const MemoryReport& r, int64_t kv_budget_bytes = -1);

}  // namespace glassbox::server
