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

Result<Derivation> derive_budget(const ModelDirFiles& files, int64_t flag_budget, const std::string& flag_source, int64_t& budget) {
  Derivation row{"max_memory", "", ""};
  budget = 0;
  if (flag_budget > 0) {
    budget = flag_budget;
    row.source = flag_source;
  } else {
    GB_ASSIGN_OR_RETURN(budget, budget_in_glassbox_json(files.glassbox, files.dir + "/glassbox.json"));
    row.source = budget > 0 ? "glassbox.json" : "default: off (the right budget is the machine's and the deployment's)";
  }
  row.value = budget > 0 ? std::to_string(budget) : "off";
  return row;
}

// A budget refusal from the session names what it reserved; the pipeline says what that was.
Error with_reserved_parts(Error e, int64_t process, int64_t tokenizer) {
  if (e.code == ErrorCode::kLimitExceeded && e.what.find("budget") != std::string::npos)
    e.what += "; reserved = process " + std::to_string(process) + " + tokenizer " + std::to_string(tokenizer);
  return e;
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

int64_t measure_tokenizer_bytes(const std::string& path) {
  const int64_t before = process_rss_bytes();
  { auto tok = Tokenizer::from_file(path); }
  return std::max<int64_t>(0, process_rss_bytes() - before);
}

Result<MemoryEstimate> estimate_text_memory(const Pipeline& pipeline, int64_t batch, int64_t tokens, int64_t process_bytes,
                                            int64_t tokenizer_bytes) {
  if (batch < 1 || tokens < 1)
    return make_error(ErrorCode::kInvalidArgument, "shape " + std::to_string(batch) + " x " + std::to_string(tokens) + " is empty");
  GB_ASSIGN_OR_RETURN(EncodedText text, text_of_tokens(pipeline, tokens));
  GB_ASSIGN_OR_RETURN(auto inputs, batch_inputs(pipeline, text.encoding, batch));
  const std::string at = std::to_string(batch) + " x " + std::to_string(text.encoding.ids.size()) + " tokens";
  // The session's rule (SessionOptions::max_memory): process + tokenizer are what it counts as reserved.
  auto report = pipeline.session().check_memory(inputs, process_bytes + tokenizer_bytes);
  if (!report.ok()) return with_reserved_parts(std::move(report).take_error(), process_bytes, tokenizer_bytes).with_where(at);
  MemoryEstimate e;
  e.batch = batch;
  e.tokens = static_cast<int64_t>(text.encoding.ids.size());
  e.baseline = process_bytes;
  e.tokenizer = tokenizer_bytes;
  e.weights = report->weights;
  e.first_run = report->first_run;
  e.arena = e.arena_counted = report->arena;
  e.budget = report->budget;
  e.run_limit = report->run_limit;
  return e;
}

Result<BudgetedPipeline> load_with_budget(const std::string& dir, const PipelineOptions& options, int64_t flag_budget,
                                          bool always_estimate, std::optional<std::pair<int64_t, int64_t>> shape,
                                          const std::string& flag_source) {
  const int64_t baseline = process_baseline_rss_bytes();  // before anything of the model is loaded
  GB_ASSIGN_OR_RETURN(ModelDirFiles files, read_model_dir(dir, options.model_file));
  int64_t budget = 0;
  GB_ASSIGN_OR_RETURN(Derivation budget_row, derive_budget(files, flag_budget, flag_source, budget));
  const bool estimate = budget > 0 || always_estimate;
  const int64_t tokenizer = estimate ? measure_tokenizer_bytes(files.tokenizer_path) : 0;
  // The session applies the budget (SessionOptions::max_memory): it refuses the process, the tokenizer and the
  // weights over it at load, and limits every run's tensors to what they leave (kLimitExceeded before the allocation).
  PipelineOptions opts = options;
  opts.session.max_memory = budget;
  opts.session.max_memory_reserved = budget > 0 ? baseline + tokenizer : 0;
  const int64_t before_load = process_rss_bytes();
  auto loaded = Pipeline::load(dir, opts);
  if (!loaded.ok()) return with_reserved_parts(std::move(loaded).take_error(), baseline, tokenizer);
  BudgetedPipeline out{std::move(loaded).value(), std::nullopt, {budget_row}};
  if (!estimate) return out;
  // What loading itself left resident beyond the weights (pool threads, the parsed graph and plans, the
  // load-time probe run, allocator caches): the resident set's high-water growth across the load, measured.
  const int64_t weights = out.pipeline.session().memory_report().weights;
  const int64_t load = std::max<int64_t>(0, process_peak_rss_bytes() - before_load - weights);
  // Runs get the budget less the process, what the load left resident, the tokenizer and the weights.
  if (budget > 0) {
    Status reserved = out.pipeline.session().set_reserved(baseline + load + tokenizer);
    if (!reserved.ok()) return with_reserved_parts(std::move(reserved).take_error(), baseline + load, tokenizer);
  }
  const int64_t batch = shape ? shape->first : out.pipeline.decisions().batch_size;
  const int64_t tokens = shape && shape->second > 0 ? shape->second : out.pipeline.decisions().max_length;
  GB_ASSIGN_OR_RETURN(MemoryEstimate e, estimate_text_memory(out.pipeline, batch, tokens, baseline + load, tokenizer));
  auto rows = memory_rows(e);
  out.rows.insert(out.rows.end(), rows.begin(), rows.end());
  out.estimate = e;
  return out;
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
  if (e.run_limit > 0)
    rows.push_back({"memory.run_limit", std::to_string(e.run_limit),
                    "each run's tensors: the budget less process, tokenizer and weights (SessionOptions::max_memory; "
                    "past it a run is refused before the allocation, HTTP 413)"});
  if (e.budget > 0)
    rows.push_back({"memory.fits", e.total() <= e.budget ? "yes" : "no",
                    std::to_string(e.total()) + " of " + std::to_string(e.budget) + " bytes"});
  return rows;
}

}  // namespace glassbox::pipeline
