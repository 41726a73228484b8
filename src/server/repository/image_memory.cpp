#include "server/repository/image_memory.h"

#include <algorithm>
#include <set>

#include "core/process_memory.h"

namespace glassbox::server {
namespace {

// A classifier's or an embedder's largest run exists only when its preprocessing ends in a fixed size.
Result<vision::SizedRun> largest_image_run(const LoadedModel& m, int64_t max_batch) {
  if (m.image_embedder) return m.image_embedder->largest_run(max_batch);
  return m.image_classifier->largest_run();
}

}  // namespace

Result<ImageAccount> image_memory_account(const LoadedModel& m, const ModelBudget& b, int64_t rss_before_load, int64_t max_batch) {
  std::vector<vision::SizedRun> runs;
  if (m.ocr) {  // its runs also name its three sessions
    GB_ASSIGN_OR_RETURN(runs, m.ocr->largest_runs());
  }
  int64_t weights = m.ocr ? 0 : m.engine().memory_report().weights;
  std::set<const Session*> seen;
  for (const auto& r : runs)
    if (seen.insert(r.session).second) weights += r.session->memory_report().weights;
  const int64_t load_growth = measured_load_growth(rss_before_load, weights);
  ImageAccount a;
  a.bytes = weights + load_growth;
  if (b.bytes <= 0) return a;
  if (!m.ocr) {
    GB_ASSIGN_OR_RETURN(auto r, largest_image_run(m, max_batch));
    runs.push_back(std::move(r));
  }
  // Each run's dry run counts outside itself the process, the load's growth and the other sessions' weights.
  const int64_t process = process_baseline_rss_bytes();
  MemoryReport largest;
  std::string what;
  for (const auto& r : runs) {
    const int64_t reserved = process + load_growth + weights - r.session->memory_report().weights;
    if (Status st = r.session->set_reserved(reserved); !st.ok())  // each run's limit: what the others leave
      return std::move(st).take_error().with_where("the " + r.what + " model");
    auto checked = r.session->check_memory(r.feeds, reserved);
    if (!checked.ok()) return std::move(checked).take_error().with_where("the " + r.what + " model's largest run");
    if (checked->run() >= largest.run()) largest = *checked, what = r.what;
  }
  a.bytes += largest.run();
  a.rows = budget_rows(b);
  auto row = [&](const char* f, int64_t v, const std::string& why) {
    a.rows.push_back({{"field", f}, {"value", std::to_string(v)}, {"source", why}});
  };
  row("memory.process", process, "measured: resident set before any model loaded");
  row("memory.load_growth", load_growth, "measured: what the model's load left resident beyond its weights");
  row("memory.weights", weights, "the initializers of every session of the model, counted whole");
  const std::string shape = what + " " + largest.shape;
  row("memory.first_run", largest.first_run, "RunStats peak of the largest declared run's first run (" + shape + ")");
  row("memory.arena", largest.arena, "RunStats arena of its second run (the static plan, kept for reuse)");
  row("memory.total", process + a.bytes, "the sum above");
  if (largest.run_limit > 0)
    row("memory.run_limit", largest.run_limit,
        "each run's tensors: the budget less the process, the load's growth and the weights (refused past it before "
        "the allocation: HTTP 413)");
  return a;
}

}  // namespace glassbox::server
