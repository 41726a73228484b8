// glassbox inspect MODEL.onnx [--json]
// glassbox inspect MODEL_DIR --max-memory SIZE [--shape BATCHxTOKENS] [--json]: does it fit, and where does it stop
// glassbox inspect MODEL.onnx --input-shape NAME=AxB ... [--max-memory SIZE] [--json]: a tensor model's estimate
// glassbox inspect DECODER_DIR --generate-shape BATCHxPROMPTxNEW [--json]: a decoder's estimate with its KV cache
#include <algorithm>
#include <iostream>

#include "cli/cli_common.h"
#include "core/process_memory.h"
#include "diag/inspect.h"
#include "graph/loader.h"
#include "glassbox/generation_memory.h"
#include "glassbox/memory_budget.h"

namespace {

using glassbox::pipeline::MemoryEstimate;

struct InspectArgs {
  std::string path;
  bool json = false;
  std::string max_memory;  // "" = none
  std::string shape;       // "BATCHxTOKENS"; "" = the declared batch_size x max_length
  std::vector<std::string> input_shapes;  // "NAME=D1xD2..." per input of an ONNX file (a tensor model)
  std::string generate_shape;             // "BATCHxPROMPTxNEW" for a decoder directory
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

// --max-memory in bytes (0 when not given); a malformed size ends the command naming it.
int64_t budget_flag(const InspectArgs& a) {
  if (a.max_memory.empty()) return 0;
  auto b = glassbox::parse_byte_size(a.max_memory);
  if (!b.ok()) glassbox::cli::fail("inspect", b.error());
  return *b;
}

void inspect_memory(const InspectArgs& a) {
  using namespace glassbox;
  const int64_t budget = budget_flag(a);
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

glassbox::NamedShape parse_input_shape(const std::string& spec) {
  using namespace glassbox;
  NamedShape s;
  const auto eq = spec.find('=');
  try {
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("no NAME=");
    s.name = spec.substr(0, eq);
    for (size_t at = eq + 1; at <= spec.size();) {
      const size_t x = std::min(spec.find('x', at), spec.size());
      s.dims.push_back(std::stoll(spec.substr(at, x - at)));
      if (s.dims.back() < 1) throw std::invalid_argument("dim < 1");
      at = x + 1;
    }
  } catch (const std::exception&) {
    cli::fail("inspect", make_error(ErrorCode::kInvalidArgument, "--input-shape '" + spec + "' is not NAME=D1xD2...", {},
                                    "e.g. --input-shape X=1000x32"));
  }
  return s;
}

// A tensor model's estimate at the given input shapes (docs/memory.md): the process (resident set before the
// model, plus the high-water growth across its load beyond the weights: a tree ensemble's compiled trees live
// there), the weights, the inputs themselves (the caller's tensors), and two dry runs (Session::check_memory).
void inspect_tensor_memory(const InspectArgs& a) {
  using namespace glassbox;
  const int64_t budget = budget_flag(a);
  std::vector<NamedShape> shapes;
  for (const auto& spec : a.input_shapes) shapes.push_back(parse_input_shape(spec));
  const int64_t baseline = process_baseline_rss_bytes();
  const int64_t before_load = process_rss_bytes();
  auto session = Session::load(a.path, SessionOptions{});
  if (!session.ok()) cli::fail("inspect", session.error());
  const int64_t weights = session->memory_report().weights;
  const int64_t process = baseline + std::max<int64_t>(0, process_peak_rss_bytes() - before_load - weights);
  std::vector<NamedTensor> inputs;  // zero-filled, one per model input, of the given shapes
  int64_t input_bytes = 0;
  for (const auto& spec : session->inputs()) {
    auto it = std::find_if(shapes.begin(), shapes.end(), [&](const NamedShape& s) { return s.name == spec.name; });
    if (it == shapes.end())
      cli::fail("inspect", make_error(ErrorCode::kInvalidArgument, "input '" + spec.name + "' has no --input-shape", a.path,
                                      "give --input-shape NAME=D1xD2... for every model input"));
    auto t = Tensor::allocate(spec.dtype, Shape(it->dims.begin(), it->dims.end()));
    if (!t.ok()) cli::fail("inspect", t.error());
    input_bytes += static_cast<int64_t>(t->nbytes());
    inputs.push_back({spec.name, std::move(t).value()});
  }
  auto r = session->check_memory(inputs, process + input_bytes);
  if (!r.ok()) cli::fail("inspect", r.error());
  const int64_t total = process + input_bytes + r->weights + r->run();
  nlohmann::ordered_json j{{"model", a.path}, {"shape", r->shape}, {"estimate_bytes", total},
                           {"breakdown", {{"process", process}, {"inputs", input_bytes}, {"weights", r->weights},
                                          {"first_run", r->first_run}, {"arena", r->arena}}}};
  if (budget > 0) j["budget_bytes"] = budget, j["fits"] = total <= budget;
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "  memory.shape = " << r->shape << "\n  memory.process = " << process
            << "  (measured: resident set before the model, plus the growth across its load beyond the weights)\n"
            << "  memory.inputs = " << input_bytes << "  (the inputs of that shape: the caller's tensors)\n"
            << "  memory.weights = " << r->weights << "  (the model's initializers, counted whole)\n"
            << "  memory.first_run = " << r->first_run << "  (RunStats peak of the shape's first run)\n"
            << "  memory.arena = " << r->arena << "  (RunStats arena of the second run)\n"
            << "  memory.total = " << total << " (" << format_bytes(total) << ")\n";
  if (budget > 0) std::cout << (total <= budget ? "fits: " : "does not fit: ") << format_bytes(total) << " of " << format_bytes(budget) << "\n";
}

// A decoder's estimate at BATCHxPROMPTxNEW (docs/memory.md): the process (resident set before the model, plus the
// growth across its load beyond the weights: the tokenizer, the parsed graph), the weights, the KV cache, the last
// step's past feeds and the larger run of the prefill and the last step (generation::estimate_decoder_memory).
void inspect_decoder_memory(const InspectArgs& a) {
  using namespace glassbox;
  NamedShape parsed = parse_input_shape("shape=" + a.generate_shape);
  if (parsed.dims.size() != 3)
    cli::fail("inspect", make_error(ErrorCode::kInvalidArgument, "--generate-shape '" + a.generate_shape + "' is not BATCHxPROMPTxNEW",
                                    {}, "e.g. --generate-shape 4x64x64"));
  const int64_t baseline = process_baseline_rss_bytes();
  const int64_t before_load = process_rss_bytes();
  auto g = GenerationSession::load(a.path);
  if (!g.ok()) cli::fail("inspect", g.error());
  const int64_t weights = g->session().memory_report().weights;
  const int64_t hwm_before = process_peak_rss_bytes();
  const int64_t process = baseline + std::max<int64_t>(0, hwm_before - before_load - weights);
  const int64_t untouched = std::max<int64_t>(0, weights - (hwm_before - before_load));  // mapped, not yet resident
  auto m = generation::estimate_decoder_memory(*g, parsed.dims[0], parsed.dims[1], parsed.dims[2]);
  if (!m.ok()) cli::fail("inspect", m.error());
  // A decoder has no load-time probe run: what its first runs leave resident beyond their tensors and feeds (the
  // GEMM weights packed on first use) is measured here, as the load's growth is (found by the decoder RSS rows).
  // The weights row already counts the mapped weights the load did not touch yet: not counted again here.
  const int64_t first_use = std::max<int64_t>(0, process_peak_rss_bytes() - hwm_before - untouched - m->past_feeds - m->run());
  const int64_t total = process + first_use + m->total_without_process(weights);
  nlohmann::ordered_json j{{"model", a.path},
                           {"shape", {{"batch", m->batch}, {"prompt", m->prompt}, {"new_tokens", m->new_tokens}}},
                           {"estimate_bytes", total},
                           {"breakdown", {{"process", process}, {"first_use", first_use}, {"weights", weights}, {"kv_cache", m->kv_cache},
                                          {"past_feeds", m->past_feeds}, {"first_run", m->first_run}, {"arena", m->arena}}},
                           {"run_shape", m->shape}};
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "  memory.process = " << process << "  (measured: before the model, plus its load's growth beyond the weights)\n"
            << "  memory.first_use = " << first_use
            << "  (measured: resident growth across the dry runs beyond their tensors and feeds: weights packed on first use)\n"
            << "  memory.weights = " << weights << "\n  memory.kv_cache = " << m->kv_cache
            << "  (batch x (prompt + new) x kv_bytes_per_token, reserved at admission)\n"
            << "  memory.past_feeds = " << m->past_feeds << "  (the last step's feeds: the past, copied)\n"
            << "  memory.first_run = " << m->first_run << "  memory.arena = " << m->arena << "  (" << m->shape << ")\n"
            << "  memory.total = " << total << " (" << format_bytes(total) << ")\n";
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
  cmd->add_option("--input-shape", a->input_shapes,
                  "NAME=D1xD2... (X=1000x32): with an ONNX file, the memory estimate at these input shapes (one per input; "
                  "two dry runs on zero-filled inputs, docs/memory.md)");
  cmd->add_option("--generate-shape", a->generate_shape,
                  "BATCHxPROMPTxNEW (4x64x64): with a decoder directory, the memory estimate of that generation (KV cache, "
                  "the steps' past feeds, dry runs of the prefill and the last step; docs/memory.md)");
  cmd->callback([a] {
    if (!a->generate_shape.empty()) return inspect_decoder_memory(*a);
    if (!a->input_shapes.empty()) return inspect_tensor_memory(*a);
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
