// SessionOptions::max_memory (docs/memory.md): the one rule a budgeted session applies, at load and
// per dry run: reserved + weights + run tensors <= max_memory, refused naming every number. Not public API.
#pragma once

#include <vector>

#include "glassbox/session.h"
#include "graph/graph.h"

namespace glassbox::runtime {

// At load, once the model is parsed: counts its initializers, refuses reserved + weights over the budget,
// and lowers options.memory_limit_bytes to what they leave (each run's tensors). No budget: weights only.
Result<MemoryReport> memory_at_load(SessionOptions& options, const graph::Model& model, const std::string& path);

// Session::load's last step: with max_memory and max_input_shapes, dry-runs the declared largest shape on
// zero-filled inputs (Session::check_memory) and refuses the session when it does not fit.
Result<Session> checked_at_declared_largest(Session session);

// Zero-filled inputs of the declared shapes (SessionOptions::max_input_shapes), one per model input.
Result<std::vector<NamedTensor>> declared_largest_inputs(const std::vector<TensorSpec>& specs,
                                                         const std::vector<NamedShape>& shapes);

// Runs `inputs` twice on `session` (the first run plans their shape, the second runs on its arena) and fills
// `account`'s shape, first_run and arena; then refuses its total over account.budget (check_memory_account).
Result<MemoryReport> dry_run_memory(const Session& session, const std::vector<NamedTensor>& inputs, MemoryReport account);

// Session::set_reserved: `reserved` replaces r.reserved and the run limit becomes the budget less it and the weights
// (options.memory_limit_bytes lowered to it, never raised); kLimitExceeded when nothing is left. Ok without a budget.
Status reserve_outside(SessionOptions& options, MemoryReport& r, int64_t reserved);

// kLimitExceeded naming the budget and every part when reserved + weights + run tensors exceed it; ok without a budget.
Status check_memory_account(const MemoryReport& r);

// A run's kLimitExceeded under a budget, with what the budget left it and why (appended to the executor's numbers).
Error explain_run_limit(Error e, const MemoryReport& r);

}  // namespace glassbox::runtime
