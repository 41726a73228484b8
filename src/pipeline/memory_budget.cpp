#include "glassbox/memory_budget.h"

#include "core/process_memory.h"
#include "pipeline/model_dir.h"

namespace glassbox::pipeline {
namespace {

// A text of `words` repetitions of one common word (its token count grows with `words`).
PipelineInput synthetic_text(int64_t words) {
  std::string text;
  for (int64_t i = 0; i < words; ++i) text += i ? " hello" : "hello";
  PipelineInput in;
  in.text = std::move(text);
  in.allow_truncation = true;  // capped at max_length, never refused
  return in;
}

// The encoded text with the most tokens <= `tokens` (bisection over the word count); the shortest one
// (special tokens + one word) when `tokens` is below it.
Result<EncodedText> text_of_tokens(const Pipeline& p, int64_t tokens) {
  GB_ASSIGN_OR_RETURN(EncodedText best, p.encode(synthetic_text(1)));
  if (static_cast<int64_t>(best.encoding.ids.size()) >= tokens) return best;  // no shorter text: the estimate says its length
  int64_t lo = 1, hi = tokens + 1;  // encode(lo) fits; every word is at least one token
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    GB_ASSIGN_OR_RETURN(EncodedText e, p.encode(synthetic_text(mid)));
    if (static_cast<int64_t>(e.encoding.ids.size()) <= tokens) {
      lo = mid;
      best = std::move(e);
    } else {
      hi = mid;
    }
  }
  return best;
}

// The model inputs of `batch` copies of `e`, as the pipeline builds a batch of equal lengths.
Result<std::vector<NamedTensor>> batch_inputs(const Pipeline& p, const Encoding& e, int64_t batch) {
  const int64_t s = static_cast<int64_t>(e.ids.size());
  std::vector<NamedTensor> inputs;
  for (const auto& spec : p.session().inputs()) {
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(spec.dtype, {batch, s}));
    auto fill = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      for (int64_t r = 0; r < batch; ++r)
        for (int64_t c = 0; c < s; ++c)
          out[r * s + c] = static_cast<T>(spec.name == "input_ids"        ? e.ids[c]
                                          : spec.name == "attention_mask" ? e.attention_mask[c]
                                                                          : e.type_ids[c]);
    };
    if (spec.dtype == DataType::kInt64) fill(t.mutable_data<int64_t>());
    else if (spec.dtype == DataType::kInt32) fill(t.mutable_data<int32_t>());
    else return make_error(ErrorCode::kUnsupported, "model input '" + spec.name + "' is not int64 or int32 ids");
    inputs.push_back({spec.name, std::move(t)});
  }
  return inputs;
}

Result<Derivation> derive_budget(const ModelDirFiles& files, int64_t flag_budget, int64_t& budget) {
  Derivation row{"max_memory", "", ""};
  budget = 0;
  if (flag_budget > 0) {
    budget = flag_budget;
    row.source = "flag --max-memory";
  } else {
    GB_ASSIGN_OR_RETURN(budget, budget_in_glassbox_json(files.glassbox, files.dir + "/glassbox.json"));
    row.source = budget > 0 ? "glassbox.json" : "default: off (the right budget is the machine's and the deployment's)";
  }
  row.value = budget > 0 ? std::to_string(budget) : "off";
  return row;
}

}  // namespace

Result<int64_t> budget_in_glassbox_json(const nlohmann::json& glassbox, const std::string& where) {
  if (!glassbox.is_object() || !glassbox.contains("max_memory") || glassbox["max_memory"].is_null()) return int64_t{0};
  const auto& j = glassbox["max_memory"];
  if (j.is_number_integer() && j.get<int64_t>() > 0) return j.get<int64_t>();
  if (j.is_string()) {
    auto b = parse_byte_size(j.get<std::string>());
    if (!b.ok()) return std::move(b).take_error().with_where(where);
    return *b;
  }
  return make_error(ErrorCode::kInvalidModel, "field 'max_memory' must be positive bytes or a size such as \"512M\", got " + j.dump(),
                    where, "use \"max_memory\": \"512M\"");
}

Result<int64_t> run_tensor_budget(const std::string& model_path, int64_t budget) {
  const int64_t baseline = process_baseline_rss_bytes();
  GB_ASSIGN_OR_RETURN(int64_t weights, initializer_bytes(model_path));
  const int64_t left = budget - baseline - weights;
  if (left > 0) return left;
  return make_error(ErrorCode::kLimitExceeded,
                    "the process (" + std::to_string(baseline) + " bytes) and the model's weights (" + std::to_string(weights) +
                        " bytes) already exceed the budget of " + std::to_string(budget) + " bytes (" + format_bytes(budget) + ")",
                    model_path, "raise --max-memory");
}

int64_t measure_tokenizer_bytes(const std::string& path) {
  const int64_t before = process_rss_bytes();
  { auto tok = Tokenizer::from_file(path); }
  return std::max<int64_t>(0, process_rss_bytes() - before);
}

Result<MemoryEstimate> estimate_text_memory(const Pipeline& pipeline, int64_t batch, int64_t tokens, int64_t tokenizer_bytes,
                                            int64_t weights_bytes, int64_t budget) {
  if (batch < 1 || tokens < 1)
    return make_error(ErrorCode::kInvalidArgument, "shape " + std::to_string(batch) + " x " + std::to_string(tokens) + " is empty");
  GB_ASSIGN_OR_RETURN(EncodedText text, text_of_tokens(pipeline, tokens));
  GB_ASSIGN_OR_RETURN(auto inputs, batch_inputs(pipeline, text.encoding, batch));
  MemoryEstimate e;
  for (int pass = 0; pass < 2; ++pass) {  // the first run plans the shape, the second runs on its arena
    RunStats stats;
    auto ran = pipeline.session().run(inputs, &stats);
    if (!ran.ok())
      return std::move(ran).take_error().with_where("dry run at " + std::to_string(batch) + " x " +
                                                    std::to_string(text.encoding.ids.size()) + " tokens");
    if (stats.used_memory_plan) e.arena = std::max(e.arena, stats.arena_bytes);
    else e.first_run = std::max(e.first_run, stats.peak_bytes);
  }
  e.arena_counted = e.arena;
  e.batch = batch;
  e.tokens = static_cast<int64_t>(text.encoding.ids.size());
  e.baseline = process_baseline_rss_bytes();
  e.tokenizer = tokenizer_bytes;
  e.weights = weights_bytes;
  e.budget = budget;
  return e;
}

Result<BudgetedPipeline> load_with_budget(const std::string& dir, const PipelineOptions& options, int64_t flag_budget,
                                          bool always_estimate, std::optional<std::pair<int64_t, int64_t>> shape) {
  process_baseline_rss_bytes();  // before anything of the model is loaded
  GB_ASSIGN_OR_RETURN(ModelDirFiles files, read_model_dir(dir, options.model_file));
  int64_t budget = 0;
  GB_ASSIGN_OR_RETURN(Derivation budget_row, derive_budget(files, flag_budget, budget));
  const bool estimate = budget > 0 || always_estimate;
  const int64_t tokenizer = estimate ? measure_tokenizer_bytes(files.tokenizer_path) : 0;
  int64_t weights = 0;
  if (estimate) {
    GB_ASSIGN_OR_RETURN(weights, initializer_bytes(files.model_path));
  }
  PipelineOptions opts = options;
  if (budget > 0) {
    // Backstop for any run: its tensors may never take more than the budget leaves after the
    // process, the tokenizer and the weights (refused before the allocation, kLimitExceeded).
    const int64_t left = budget - process_baseline_rss_bytes() - tokenizer - weights;
    if (left <= 0) {
      MemoryEstimate e{0, 0, process_baseline_rss_bytes(), tokenizer, weights, 0, 0, 0, budget};
      return check_memory_budget(e, dir);
    }
    opts.session.memory_limit_bytes = std::min(opts.session.memory_limit_bytes, left);
  }
  const int64_t before_load = process_rss_bytes();
  GB_ASSIGN_OR_RETURN(Pipeline p, Pipeline::load(dir, opts));
  BudgetedPipeline out{std::move(p), std::nullopt, {budget_row}};
  if (!estimate) return out;
  // What loading itself left resident beyond the weights (pool threads, the parsed graph and plans, the
  // load-time probe run, allocator caches): the resident set's high-water growth across the load, measured.
  const int64_t load = std::max<int64_t>(0, process_peak_rss_bytes() - before_load - weights);
  const int64_t batch = shape ? shape->first : out.pipeline.decisions().batch_size;
  const int64_t tokens = shape && shape->second > 0 ? shape->second : out.pipeline.decisions().max_length;
  GB_ASSIGN_OR_RETURN(MemoryEstimate e, estimate_text_memory(out.pipeline, batch, tokens, tokenizer, weights, budget));
  e.baseline += load;  // the process row: before the model, plus what loading left beyond the weights
  GB_RETURN_IF_ERROR(check_memory_budget(e, dir));
  auto rows = memory_rows(e);
  out.rows.insert(out.rows.end(), rows.begin(), rows.end());
  out.estimate = e;
  return out;
}

Status check_memory_budget(const MemoryEstimate& e, const std::string& where) {
  if (e.budget <= 0 || e.total() <= e.budget) return {};
  if (e.batch == 0)  // refused before loading the model: what is already there leaves nothing for runs
    return make_error(ErrorCode::kLimitExceeded,
                      "the process (" + std::to_string(e.baseline) + " bytes), the tokenizer (" + std::to_string(e.tokenizer) +
                          ") and the weights (" + std::to_string(e.weights) + ") already take " + std::to_string(e.total()) +
                          " bytes, over the budget of " + std::to_string(e.budget) + " bytes (" + format_bytes(e.budget) + ")",
                      where, "raise --max-memory (glassbox.json max_memory)");
  return make_error(ErrorCode::kLimitExceeded,
                    "the model needs an estimated " + std::to_string(e.total()) + " bytes (" + format_bytes(e.total()) +
                        ") at its largest declared shape " + std::to_string(e.batch) + " x " + std::to_string(e.tokens) +
                        " tokens, over the budget of " + std::to_string(e.budget) + " bytes (" + format_bytes(e.budget) +
"): process " + std::to_string(e.baseline) + " + tokenizer " + std::to_string(e.tokenizer) +
                        " + weights " + std::to_string(e.weights) + " + run tensors " + std::to_string(e.run()),
                    where, "raise --max-memory (glassbox.json max_memory), or declare a smaller batch_size / max_length");
}

std::vector<Derivation> memory_rows(const MemoryEstimate& e) {
  const std::string shape = std::to_string(e.batch) + " x " + std::to_string(e.tokens) + " tokens";
  std::vector<Derivation> rows = {
      {"memory.shape", shape, "the largest declared shape: batch_size x max_length (or inspect --shape)"},
      {"memory.process", std::to_string(e.baseline),
       "measured: resident set before any model loaded (binary, libraries) plus the high-water growth across the "
       "model's load beyond the weights (pool threads, parsed graph, the load-time probe run)"},
      {"memory.tokenizer", std::to_string(e.tokenizer), "measured: resident-set growth while tokenizer.json loaded"},
      {"memory.weights", std::to_string(e.weights),
       "the model's initializers, counted whole (fp32 packing replaces the mapped pages it packs)"},
      {"memory.first_run", std::to_string(e.first_run),
       "RunStats peak of the shape's first run (tensor by tensor; the heap keeps that memory)"},
      {"memory.arena", std::to_string(e.arena_counted), "RunStats arena of the later runs (the static plan of the shape)"},
      {"memory.total", std::to_string(e.total()) + " (" + format_bytes(e.total()) + ")", "the sum above"},
  };
  if (e.budget > 0)
    rows.push_back({"memory.fits", e.total() <= e.budget ? "yes" : "no",
                    std::to_string(e.total()) + " of " + std::to_string(e.budget) + " bytes"});
  return rows;
}

}  // namespace glassbox::pipeline
