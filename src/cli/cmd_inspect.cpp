// glassbox inspect MODEL.onnx [--json]
// glassbox inspect MODEL_DIR --max-memory SIZE [--shape BATCHxTOKENS] [--json]: does it fit, and where does it stop
#include <algorithm>
#include <iostream>

#include "cli/cli_common.h"
#include "core/process_memory.h"
#include "diag/inspect.h"
#include "graph/loader.h"
#include "glassbox/memory_budget.h"

namespace {

using glassbox::pipeline::MemoryEstimate;

struct InspectArgs {
  std::string path;
  bool json = false;
  std::string max_memory;  // "" = none
  std::string shape;       // "BATCHxTOKENS"; "" = the declared batch_size x max_length
};

// The largest n in [1, cap] with fits(n), given fits is monotone (true then false); 0 when even 1 does not fit.
template <class Fits>
int64_t largest_fitting(int64_t cap, Fits fits) {
  int64_t lo = 0, hi = 1;  // fits(lo) (0: vacuous), hi: next to try
  while (hi <= cap && fits(hi)) lo = hi, hi *= 2;
  hi = std::min(hi, cap + 1);  // !fits(hi) or past the cap
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

void inspect_memory(const InspectArgs& a) {
  using namespace glassbox;
  int64_t budget = 0;
  if (!a.max_memory.empty()) {
    auto b = parse_byte_size(a.max_memory);
    if (!b.ok()) cli::fail("inspect", b.error());
    budget = *b;
  }
  std::optional<std::pair<int64_t, int64_t>> shape;
  if (!a.shape.empty()) {
    const auto x = a.shape.find('x');
    try {
      if (x == std::string::npos) throw std::invalid_argument("no x");
      shape = std::pair<int64_t, int64_t>{std::stoll(a.shape.substr(0, x)), std::stoll(a.shape.substr(x + 1))};
    } catch (const std::exception&) {
      cli::fail("inspect", make_error(ErrorCode::kInvalidArgument, "--shape '" + a.shape + "' is not BATCHxTOKENS", {}, "e.g. --shape 8x128"));
    }
  }
  // Estimate without refusing: the point is to say whether it fits.
  auto loaded = pipeline::load_with_budget(a.path, PipelineOptions{}, 0, true, shape);
  if (!loaded.ok()) cli::fail("inspect", loaded.error());
  MemoryEstimate e = *loaded->estimate;
  e.budget = budget;
  const Pipeline& p = loaded->pipeline;
  const int64_t max_length = p.decisions().max_length;
  auto total_at = [&](int64_t batch, int64_t tokens) {
    auto r = pipeline::estimate_text_memory(p, batch, tokens, e.baseline, e.tokenizer);  // process row: with the load's growth
    if (!r.ok()) cli::fail("inspect", r.error());
    return r->total();
  };
  nlohmann::ordered_json j{{"model", a.path}, {"shape", {{"batch", e.batch}, {"tokens", e.tokens}}}, {"estimate_bytes", e.total()},
                           {"breakdown", {{"process", e.baseline}, {"tokenizer", e.tokenizer}, {"weights", e.weights},
                                          {"first_run", e.first_run}, {"arena", e.arena}}}};
  if (budget > 0) {
    j["budget_bytes"] = budget;
    j["fits"] = e.total() <= budget;
    // Where it stops fitting: the batch at these tokens, the tokens (up to max_length) at this batch.
    j["largest_batch_at_tokens"] = largest_fitting(4096, [&](int64_t b) { return total_at(b, e.tokens) <= budget; });
    j["largest_tokens_at_batch"] = largest_fitting(max_length, [&](int64_t t) { return total_at(e.batch, t) <= budget; });
    j["max_length"] = max_length;
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  for (const auto& d : pipeline::memory_rows(e)) std::cout << "  " << d.field << " = " << d.value << "  (" << d.source << ")\n";
  if (budget <= 0) return;
  std::cout << (e.total() <= budget ? "fits: " : "does not fit: ") << format_bytes(e.total()) << " of " << format_bytes(budget)
            << " at " << e.batch << " x " << e.tokens << " tokens\n"
            << "stops fitting: at " << e.tokens << " tokens the largest batch that fits is "
            << j["largest_batch_at_tokens"].get<int64_t>() << "; at batch " << e.batch
            << " the longest input that fits is " << j["largest_tokens_at_batch"].get<int64_t>() << " tokens (max_length "
            << max_length << ")\n";
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Report what an ONNX model contains and what to check before deploying it");
  auto a = std::make_shared<InspectArgs>();
  cmd->add_option("model", a->path, "ONNX model file, or a model directory with --max-memory / --shape")->required();
  cmd->add_flag("--json", a->json, "print the stable JSON report (schema glassbox.inspect/1, see docs/inspect.md); default: a table");
  cmd->add_option("--max-memory", a->max_memory,
                  "SIZE (512M): with a model directory, whether it fits at --shape and the batch / length where it stops "
                  "fitting (dry runs; docs/memory.md)");
  cmd->add_option("--shape", a->shape, "BATCHxTOKENS (8x128): the shape to estimate (default: batch_size x max_length)");
  cmd->callback([a] {
    if (!a->max_memory.empty() || !a->shape.empty()) return inspect_memory(*a);
    glassbox::graph::LoadOptions opts;
    opts.checker_failure_is_error = false;  // inspect reports checker findings instead of refusing
    auto model = glassbox::graph::load_model(a->path, opts);
    if (!model.ok()) glassbox::cli::fail("inspect", model.error());
    auto report = glassbox::diag::inspect_model(*model);
    if (a->json) std::cout << glassbox::diag::inspect_to_json(report).dump(2) << "\n";
    else std::cout << glassbox::diag::inspect_to_text(report);
  });
}
