#include "runtime/session_memory.h"

#include <algorithm>
#include <deque>

#include "core/process_memory.h"

namespace glassbox::runtime {
namespace {

std::string bytes_text(int64_t b) { return std::to_string(b) + " bytes (" + format_bytes(b) + ")"; }

std::string shape_text(const std::vector<NamedTensor>& inputs) {
  std::string s;
  for (const auto& in : inputs) {
    s += (s.empty() ? "" : " ") + in.name + "[";
    for (size_t i = 0; i < in.tensor.shape().size(); ++i) s += (i ? "," : "") + std::to_string(in.tensor.shape()[i]);
    s += "]";
  }
  return s;
}

const char* const kFix = "raise max_memory (--max-memory, glassbox.json max_memory), or declare a smaller largest shape";

// A dry run stopped by the run limit is the same refusal as an account over the budget, worded as one (the
// caller cannot tell which of the two checks a shape crosses first: that depends on the process's own size).
Error dry_run_refusal(Error e, const MemoryReport& account) {
  if (e.code == ErrorCode::kLimitExceeded && account.budget > 0)
    e.what = "a run at the largest declared shape " + account.shape + " does not fit in what is left, over the budget of " +
             bytes_text(account.budget) + ": " + e.what;
  return std::move(e).with_where("dry run at " + account.shape);
}

}  // namespace

Result<MemoryReport> memory_at_load(SessionOptions& options, const graph::Model& model, const std::string& path) {
  MemoryReport r;
  r.budget = std::max<int64_t>(0, options.max_memory);
  r.reserved = std::max<int64_t>(0, options.max_memory_reserved);
  for (const auto& [name, t] : model.graph.initializers) r.weights += static_cast<int64_t>(t.nbytes());
  if (r.budget <= 0) return r;
  r.run_limit = r.budget - r.reserved - r.weights;
  if (r.run_limit <= 0)
    return make_error(ErrorCode::kLimitExceeded,
                      "what is reserved outside the session (" + std::to_string(r.reserved) + " bytes) and the model's weights (" +
                          std::to_string(r.weights) + ") already take " + bytes_text(r.reserved + r.weights) +
                          ", over the budget of " + bytes_text(r.budget) + ": nothing is left for a run's tensors",
                      path, kFix);
  options.memory_limit_bytes = std::min(options.memory_limit_bytes, r.run_limit);
  return r;
}

Status reserve_outside(SessionOptions& options, MemoryReport& r, int64_t reserved) {
  if (r.budget <= 0) return {};
  const int64_t limit = r.budget - reserved - r.weights;
  if (limit <= 0)
    return make_error(ErrorCode::kLimitExceeded,
                      "what is reserved outside the session (" + std::to_string(reserved) + " bytes) and the model's weights (" +
                          std::to_string(r.weights) + ") take " + bytes_text(reserved + r.weights) + ", over the budget of " +
                          bytes_text(r.budget) + ": nothing is left for a run's tensors",
                      "Session::set_reserved", kFix);
  r.reserved = reserved;
  r.run_limit = std::min(r.run_limit > 0 ? r.run_limit : limit, limit);
  options.memory_limit_bytes = std::min(options.memory_limit_bytes, r.run_limit);
  return {};
}

Result<std::vector<NamedTensor>> declared_largest_inputs(const std::vector<TensorSpec>& specs,
                                                         const std::vector<NamedShape>& shapes) {
  std::vector<NamedTensor> inputs;
  for (const auto& spec : specs) {
    auto it = std::find_if(shapes.begin(), shapes.end(), [&](const NamedShape& s) { return s.name == spec.name; });
    if (it == shapes.end())
      return make_error(ErrorCode::kInvalidArgument, "input '" + spec.name + "' has no declared largest shape",
                        "SessionOptions::max_input_shapes", "declare a shape for every model input, or none");
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(spec.dtype, Shape(it->dims.begin(), it->dims.end())));
    inputs.push_back({spec.name, std::move(t)});
  }
  for (const auto& s : shapes)
    if (std::none_of(specs.begin(), specs.end(), [&](const TensorSpec& t) { return t.name == s.name; }))
      return make_error(ErrorCode::kInvalidArgument, "'" + s.name + "' is not an input of the model",
                        "SessionOptions::max_input_shapes", "use the names `glassbox inspect` lists");
  return inputs;
}

Result<Session> checked_at_declared_largest(Session session) {
  const SessionOptions& o = session.options();
  if (o.max_memory <= 0 || o.max_input_shapes.empty()) return session;
  GB_ASSIGN_OR_RETURN(auto largest, declared_largest_inputs(session.inputs(), o.max_input_shapes));
  GB_RETURN_IF_ERROR(session.check_memory(largest).status());
  return session;
}

// A session whose past inputs are bound (SessionOptions::kv_cache_inputs) dry-runs on zero scratch caches holding
// each fed past's positions (none appended): the caller's caches are its own memory, not the run's.
namespace {

std::vector<KvCacheBinding> scratch_caches(const Session& session, const std::vector<NamedTensor>& inputs,
                                           std::deque<std::vector<float>>& storage) {
  std::vector<KvCacheBinding> caches;
  if (!session.kv_cache_bound()) return caches;
  for (const auto& name : session.options().kv_cache_inputs)
    for (const auto& in : inputs) {
      if (in.name != name || in.tensor.shape().size() != 4) continue;
      const Shape& s = in.tensor.shape();
      KvCacheBinding c;
      c.input = name;
      for (int64_t b = 0; b < s[0]; ++b) {
        storage.emplace_back(static_cast<size_t>(std::max<int64_t>(1, s[1] * s[2] * s[3])), 0.f);  // non-null at 0 positions
        c.rows.push_back(storage.back().data());
        c.capacities.push_back(s[2]);
        c.lengths.push_back(s[2]);
        c.fresh.push_back(0);
      }
      caches.push_back(std::move(c));
    }
  return caches;
}

}  // namespace

Result<MemoryReport> dry_run_memory(const Session& session, const std::vector<NamedTensor>& inputs, MemoryReport account) {
  account.shape = shape_text(inputs);
  account.first_run = account.arena = 0;
  std::deque<std::vector<float>> storage;  // rows' buffers stay where they are while bound
  std::vector<KvCacheBinding> caches = scratch_caches(session, inputs, storage);
  for (int pass = 0; pass < 2; ++pass) {  // the first run plans the shape, the second runs on its arena
    RunStats stats;
    auto ran = session.kv_cache_bound() ? session.run_bound(inputs, caches, &stats) : session.run(inputs, &stats);
    if (!ran.ok()) return dry_run_refusal(std::move(ran).take_error(), account);
    if (stats.used_memory_plan) account.arena = std::max(account.arena, stats.arena_bytes);
    else account.first_run = std::max(account.first_run, stats.peak_bytes);
    if (pass == 0) GB_RETURN_IF_ERROR(check_memory_account(account));  // no second run (its arena) when already over
  }
  GB_RETURN_IF_ERROR(check_memory_account(account));
  return account;
}

Status check_memory_account(const MemoryReport& r) {
  if (r.budget <= 0 || r.total() <= r.budget) return {};
  return make_error(ErrorCode::kLimitExceeded,
                    "the model needs an estimated " + bytes_text(r.total()) + " at its largest declared shape " + r.shape +
                        ", over the budget of " + bytes_text(r.budget) + ": reserved " + std::to_string(r.reserved) +
                        " + weights " + std::to_string(r.weights) + " + run tensors " + std::to_string(r.run()) + " (first run " +
                        std::to_string(r.first_run) + " + arena " + std::to_string(r.arena) + ")",
                    "SessionOptions::max_memory", kFix);
}

Error explain_run_limit(Error e, const MemoryReport& r) {
  if (r.budget <= 0 || e.code != ErrorCode::kLimitExceeded) return e;
  e.what += "; under the memory budget of " + bytes_text(r.budget) + " a run's tensors may take " + std::to_string(r.run_limit) +
            " (the budget less reserved " + std::to_string(r.reserved) + " and weights " + std::to_string(r.weights) + ")";
  e.fix = "send smaller shapes, or raise max_memory (--max-memory, glassbox.json max_memory)";
  return e;
}

}  // namespace glassbox::runtime
