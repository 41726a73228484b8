#include "server/repository/model_memory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/process_memory.h"
#include "glassbox/memory_budget.h"

namespace glassbox::server {

std::string ModelBudget::source() const {
  std::string s;
  if (own > 0) s = own_source + " " + std::to_string(own);
  if (server > 0) {
    const int64_t left = server - others;
    if (!s.empty()) s += left < own ? ", tighter: " : ", looser: ";
    s += "the server's max_memory " + std::to_string(server) + " less " + std::to_string(others) +
         " taken by the models already loaded = " + std::to_string(left);
  }
  return s.empty() ? "default: off (the right budget is the machine's and the deployment's)" : s;
}

Result<ModelBudget> model_budget(const std::string& name, const std::string& dir, const ServerOptions& options, int64_t others) {
  ModelBudget b;
  b.server = std::max<int64_t>(0, options.max_memory);
  b.others = others;
  if (options.model_max_memory.is_object() && options.model_max_memory.contains(name)) {
    GB_ASSIGN_OR_RETURN(b.own, pipeline::budget_in_glassbox_json({{"max_memory", options.model_max_memory[name]}},
                                                                 "server options: model_max_memory." + name));
    b.own_source = "serve config (server.model_max_memory)";
  } else {
    std::ifstream gj(std::filesystem::path(dir) / "glassbox.json");
    const auto j = gj ? nlohmann::json::parse(gj, nullptr, false) : nlohmann::json();
    GB_ASSIGN_OR_RETURN(b.own, pipeline::budget_in_glassbox_json(j, "glassbox.json"));
    b.own_source = "glassbox.json";
  }
  b.bytes = b.own;
  if (b.server > 0) {
    const int64_t left = b.server - others;
    if (left <= process_baseline_rss_bytes())
      return make_error(ErrorCode::kLimitExceeded,
                        "no room under the server's memory budget of " + std::to_string(b.server) + " bytes (" +
                            format_bytes(b.server) + "): the process (" + std::to_string(process_baseline_rss_bytes()) +
                            " bytes) and the models already loaded (" + std::to_string(others) + ") take it all",
                        "server options: max_memory", "unload a model, or raise serve --max-memory");
    b.bytes = b.bytes > 0 ? std::min(b.bytes, left) : left;
  }
  return b;
}

Error with_budget_source(Error e, const ModelBudget& b) {
  if (e.code == ErrorCode::kLimitExceeded && b.bytes > 0) e.what += " [the budget: " + b.source() + "]";
  return e;
}

nlohmann::json budget_rows(const ModelBudget& b) {
  auto rows = nlohmann::json::array();
  rows.push_back({{"field", "max_memory"}, {"value", b.bytes > 0 ? std::to_string(b.bytes) : "off"}, {"source", b.source()}});
  if (b.server > 0)
    rows.push_back({{"field", "memory.server"},
                    {"value", std::to_string(b.server)},
                    {"source", "serve --max-memory: the process and every loaded model's account must fit; " +
                                   std::to_string(b.others) + " bytes were taken by the models loaded before this one"}});
  return rows;
}

KvBudget kv_budget_for(const ModelBudget& b, const ServerOptions& options) {
  if (options.kv_cache_bytes != kKvDerived) return {options.kv_cache_bytes, "server option kv_cache_bytes (declared)"};
  if (b.bytes <= 0)
    return {ServerOptions{}.kv_cache_bytes, "server option kv_cache_bytes (its default: no memory budget to derive it from)"};
  const int64_t process = process_baseline_rss_bytes();
  const int64_t left = std::max<int64_t>(0, b.bytes - process);
  return {left / kKvShareOfBudget,
          "derived from the memory budget (no --kv-cache-bytes): (max_memory " + std::to_string(b.bytes) + " - process " +
              std::to_string(process) + ") / " + std::to_string(kKvShareOfBudget) +
              ": the cache and the past copied into each step's feeds take up to this much each, half is left for "
              "the weights and the runs; risk: long or many concurrent requests wait (429) or are refused (413) "
              "sooner than with a declared --kv-cache-bytes"};
}

Status check_kv_budget_at_start(const ServerOptions& options) {
  if (options.max_memory <= 0) return {};
  const int64_t process = process_baseline_rss_bytes();
  const int64_t need = process + 2 * options.kv_cache_bytes;
  if (need <= options.max_memory) return {};
  return make_error(ErrorCode::kLimitExceeded,
                    "kv_cache_bytes " + std::to_string(options.kv_cache_bytes) + " does not fit the server's max_memory " +
                        std::to_string(options.max_memory) + ": the process (" + std::to_string(process) +
                        ") + the KV cache + the past copied into each step's feeds (2 x " +
                        std::to_string(options.kv_cache_bytes) + ") = " + std::to_string(need) +
                        ", before any weights",
                    "server options: kv_cache_bytes",
                    "lower --kv-cache-bytes (at most " + std::to_string(std::max<int64_t>(0, (options.max_memory - process) / 2)) +
                        " here), leave it out to derive it from the budget, or raise --max-memory");
}

void apply_generation_budget(SessionOptions& session, const ModelBudget& b, int64_t kv_budget_bytes) {
  session.max_memory = b.bytes;
  session.max_memory_reserved = b.bytes > 0 ? process_baseline_rss_bytes() + 2 * kv_budget_bytes : 0;
}

int64_t measured_load_growth(int64_t rss_before_load, int64_t weights) {
  return std::max<int64_t>(0, process_rss_bytes() - rss_before_load - weights);
}

nlohmann::json session_memory_rows(const MemoryReport& r, int64_t kv_budget_bytes, const std::string& kv_source,
                                   const MeasuredPart& measured) {
  auto rows = nlohmann::json::array();
  auto row = [&](const char* f, int64_t v, const std::string& why) {
    rows.push_back({{"field", f}, {"value", std::to_string(v)}, {"source", why}});
  };
  const int64_t kv = std::max<int64_t>(0, kv_budget_bytes);
  const int64_t feeds = kv;                                         // the past copied into a step's feeds: at most the cache
  // Without a budget the session counts nothing outside it.
  const int64_t process = r.budget > 0 ? r.reserved - kv - feeds - measured.bytes : 0;
  if (r.budget > 0) row("memory.process", process, "measured: resident set before any model loaded");
  if (r.budget > 0 && *measured.field) row(measured.field, measured.bytes, measured.why);
  if (kv_budget_bytes >= 0) {
    row("memory.kv_cache", kv,
        (kv_source.empty() ? std::string("server option kv_cache_bytes") : kv_source) +
            ": what all sequences in flight may reserve together (admission refuses past it)");
    row("memory.kv_feeds", feeds,
        "the past each step copies into its feeds where the cache is not in place (docs/generation.md): at most the cache");
  }
  row("memory.weights", r.weights, "the model's initializers, counted whole");
  if (!r.shape.empty()) {
    row("memory.first_run", r.first_run, "RunStats peak of the warm-up shape's first run (" + r.shape + ")");
    row("memory.arena", r.arena, "RunStats arena of its second run (the static plan, kept for reuse)");
  }
  row("memory.total", process + measured.bytes + kv + feeds + r.weights + r.run(), "the sum above");
  if (r.run_limit > 0)
    row("memory.run_limit", r.run_limit,
        "each run's tensors: the budget less the process, the KV cache and feeds and the weights (refused past it before the "
        "allocation: HTTP 413)");
  return rows;
}

}  // namespace glassbox::server
