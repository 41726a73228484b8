#include "diag/explain.h"

#include <functional>
#include <sstream>

#include "core/aggregate_fields.h"
#include "core/option_table.h"
#include "glassbox/process.h"

namespace glassbox::diag {
namespace {

using nlohmann::json;

template <class S>
using Field = OptionField<S>;  // core/option_table.h: one table mechanism for every options struct

std::string bool_text(bool b) { return b ? "true" : "false"; }
std::string str_text(const std::string& s) { return s; }
template <class T>
std::string num_text(T v) { return std::to_string(v); }
const char* side_text(Side s) { return s == Side::kLeft ? "left" : "right"; }

std::string truncation_text(const std::optional<TruncationPolicy>& t) {
  if (!t) return "none";
  const char* strategy = t->strategy == TruncationStrategy::kLongestFirst ? "longest_first"
                         : t->strategy == TruncationStrategy::kOnlyFirst  ? "only_first"
                                                                          : "only_second";
  return std::string(strategy) + " max_length=" + std::to_string(t->max_length) + " side=" + side_text(t->direction) +
         " stride=" + std::to_string(t->stride);
}

std::string padding_text(const std::optional<PaddingPolicy>& p) {
  if (!p) return "none";
  std::string s = p->strategy == PaddingStrategy::kBatchLongest ? "longest" : "fixed=" + std::to_string(p->fixed_length);
  return s + " side=" + side_text(p->direction) + " multiple_of=" + std::to_string(p->pad_to_multiple_of) +
         " pad_id=" + std::to_string(p->pad_id);
}

#define GB_FIELD(S, field, to_text, reason, risk) GB_OPTION_FIELD(S, field, to_text, reason, risk)

// SessionOptions::max_memory and its inputs (docs/memory.md).
std::vector<Field<SessionOptions>> session_memory_fields() {
  return {
      GB_FIELD(SessionOptions, max_memory, num_text,
               "0 = off: the right budget is the machine's and the deployment's, not ours; with one, load refuses what does "
               "not fit (reserved + weights + the declared largest shape's run tensors) and each run's tensors are limited "
               "to what reserved + weights leave (docs/memory.md)",
               "off: a shape the machine cannot hold ends in the OOM killer, not an Error; too low refuses a model or "
               "requests that would fit"),
      GB_FIELD(SessionOptions, max_memory_reserved, num_text,
               "0: the caller counts nothing outside the session; pipelines and the server fill in the process and "
               "tokenizer (measured) and a server's other models",
               "too low lets the budget count less than is resident (the measured RSS check in ctest runtime_memory_rss)"),
      {"max_input_shapes",
       [](const SessionOptions& o) {
         std::string s = "[";
         for (const auto& n : o.max_input_shapes) {
           s += (s.size() > 1 ? " " : "") + n.name + "[";
           for (size_t i = 0; i < n.dims.size(); ++i) s += (i ? "," : "") + std::to_string(n.dims[i]);
           s += "]";
         }
         return s + "]";
       },
       [](SessionOptions& o, const json& j) {
         o.max_input_shapes.clear();
         for (const auto& [name, dims] : j.items()) o.max_input_shapes.push_back({name, dims.get<std::vector<int64_t>>()});
       },
       "none: a pipeline dry-runs its own largest text shape (batch_size x max_length); a bare session declares "
       "{\"input\": [dims]} to have it dry-run at load under max_memory",
       "none with a budget checks the weights only at load: an oversized run is still refused at its allocation"},
  };
}

const std::vector<Field<SessionOptions>>& session_fields() {
  static const std::vector<Field<SessionOptions>> f = {
      GB_FIELD(SessionOptions, threads, num_text,
               "0 = physical cores: SMT siblings share the FPUs that GEMM saturates, so more threads add contention",
               "more threads than cores oversubscribes and raises p95; 1 thread halves throughput on 2 cores"),
      GB_FIELD(SessionOptions, opt_level, num_text,
               "2: every pass is tested against level 0 (the graph exactly as written) on awkward shapes",
               "a pass bug changes results silently; bisect with `glassbox diff --a opt-level=0 --b opt-level=2`"),
      GB_FIELD(SessionOptions, disabled_passes, list_text,
               "none: all passes of the chosen level run, each logged by name",
               "disabling folding passes costs latency, never correctness"),
      GB_FIELD(SessionOptions, memory_limit_bytes, num_text,
               "16 GiB: above BERT-large at batch 32 (~4 GiB), far below a shape bomb (10^12 elements)",
               "too high lets a malicious or buggy input reach the OOM killer; too low refuses legitimate batches"),
      GB_FIELD(SessionOptions, max_folded_constant_bytes, num_text,
               "1 MiB: folding bigger constants trades a cheap node for resident memory",
               "higher grows RSS with folded copies of large tensors"),
      GB_FIELD(SessionOptions, plan_cache_size, num_text,
               "64 shape signatures: every length up to 512 tokens rounded to 8 (as pipelines round) stays planned",
               "too small re-plans on every new length (latency spikes); too large keeps stale plans resident"),
      GB_FIELD(SessionOptions, use_memory_plan, bool_text,
               "true: one arena per run with lifetime-based reuse, no per-tensor allocation in the steady state",
               "false allocates every tensor from the heap: slower, more fragmentation"),
      GB_FIELD(SessionOptions, kept_arenas, num_text,
               "2: one arena per sequence the pool's two threads run at once, reused instead of freshly mapped each run",
               "the kept arenas stay resident (the largest recent runs' size); 0 maps and zeroes a new arena every run"),
      GB_FIELD(SessionOptions, log_passes, bool_text,
               "false: `run` output stays clean; the changes are always in Session::pass_log()",
               "none"),
      GB_FIELD(SessionOptions, last_position_outputs, list_text,
               "none: every output as the model declares it; the generation session names logits (sampling reads each "
               "sequence's last position, and the LM head over every prompt token was most of a prefill's work)",
               "a named output is [batch, 1, N] instead of [batch, sequence, N]: for callers that read the last position "
               "only; a chain the pass does not recognise stays whole (the pass log says why)"),
      GB_FIELD(SessionOptions, unspecialized_symbols, list_text,
               "none: each distinct input shape gets its own specialized plan; the generation session names its "
               "past-length symbols (every decode step has a longer past: a plan per step was most of its time); text "
               "pipelines default to \"*\", every symbolic input dim (a plan per text length cost a new length 1.14x)",
               "a named dim's shape arithmetic is not folded (each run computes it); its memory plan grows by "
               "doubling, so up to 2x the grown tensors' bytes stay reserved in the arena"),
      GB_FIELD(SessionOptions, kv_cache_inputs, list_text, "none: ordinary inputs; the generation session names its past "
               "inputs (Optimum layout): copying the past in and the present out cost O(cached tokens) per step",
               "the named inputs' contents are never read, the bound caches are: all or none; runs must bind them all"),
      GB_FIELD(SessionOptions, map_initializers, bool_text,
               "true: weights stay in the mapped file (no copy at load; packed weights drop their pages): RSS ~ packed copy",
               "the model file must not change while loaded; false copies all weights (RSS grows by the model size)"),
      {"precision", [](const SessionOptions& o) { return std::string(precision_name(o.precision)); },
       [](SessionOptions& o, const json& j) {
         auto p = parse_precision(j.get<std::string>());
         if (!p.ok()) throw json::other_error::create(501, p.error().what + " (" + p.error().fix + ")", nullptr);
         o.precision = *p;
       },
       "fp32: results match the exported model's arithmetic (what tests compare against onnxruntime)",
       "bf16 (GEMMs on constant weights in bfloat16, fp32 accumulation; ~2x faster on AVX512-BF16 CPUs) and "
       "int8-dynamic (int8 weights per channel, uint8 activations per row, int32 sums; AVX512-VNNI) change outputs "
       "(bf16 ~1e-2 relative, int8 more): measure them on your inputs with `glassbox accuracy`"},
      {"weights_cache", [](const SessionOptions& o) { return o.weights_cache.empty() ? std::string("off") : o.weights_cache; },
       [](SessionOptions& o, const json& j) { o.weights_cache = j.is_null() ? std::string() : j.get<std::string>(); },
       "off: the cache writes the packed weights (~ the model's size) to a directory only you can choose; "
       "with a directory, later loads map them instead of packing (~2/3 of the first run)",
       "the directory fills with one file per model and precision (replaced, never accumulated, when the model, "
       "engine or CPU changes); a file is used only when its key and every checksum match"},
      {"pool_wait", [](const SessionOptions& o) { return std::string(pool_wait_name(o.pool_wait)); },
       [](SessionOptions& o, const json& j) {
         auto w = parse_pool_wait(j.get<std::string>());
         if (!w.ok()) throw json::other_error::create(501, w.error().what + " (" + w.error().fix + ")", nullptr);
         o.pool_wait = *w;
       },
       "auto: during a run idle pool threads poll up to 200 us for the next op (a kernel wake-up costs tens of us, "
       "~100-250 ops per encoder run), but only while the machine has an idle core and no spinner was just preempted",
       "spin burns up to 200 us of a core per wait even when others need it (3.5x slower runs measured under load); "
       "sleep pays a kernel wake-up per op (~12 % of a small model's CPU in the kernel)"},
  };
  static const std::vector<Field<SessionOptions>> all = [] {
    std::vector<Field<SessionOptions>> v = f;
    for (auto& m : session_memory_fields()) v.push_back(std::move(m));
    return v;
  }();
  return all;
}

const std::vector<Field<graph::LoadOptions>>& load_fields() {
  using L = graph::LoadOptions;
  static const std::vector<Field<L>> f = {
      GB_FIELD(L, max_model_bytes, num_text, "2 GiB: protobuf cannot parse larger messages; larger models use external data",
               "raising it does not help (protobuf's own limit); lowering it refuses big single-file models"),
      GB_FIELD(L, max_graph_depth, num_text, "32: real models nest If/Loop < 5 deep; malicious ones nest 10^5 to blow the stack",
               "very high values let a crafted file exhaust the stack"),
      GB_FIELD(L, max_tensor_elements, num_text, "4 G elements: beyond any released transformer layer",
               "very high values let a crafted header request absurd allocations"),
      GB_FIELD(L, max_external_data_bytes, num_text, "64 GiB of external data in total",
               "high values let a model map more than the machine holds"),
      GB_FIELD(L, run_checker, bool_text, "true: malformed graphs are refused before anything is built",
               "false accepts graphs the ONNX spec forbids; errors then surface later and less clearly"),
      GB_FIELD(L, run_shape_inference, bool_text, "true: inspect and planners know shapes ahead of time",
               "false hides unknown-shape warnings; costs load time on huge graphs when true"),
      GB_FIELD(L, checker_failure_is_error, bool_text, "true for running models; `inspect` sets false to report instead",
               "false runs models the checker rejects"),
      GB_FIELD(L, map_initializers, bool_text,
               "true: initializers over 16 KiB are views of the mapped file (no copy; packed weights release their pages)",
               "the model file must not change while loaded (as with any mmap); false copies every payload (RSS + model size)"),
  };
  return f;
}

const std::vector<Field<EncodeOptions>>& encode_fields() {
  using E = EncodeOptions;
  static const std::vector<Field<E>> f = {
      {"add_special_tokens", [](const E& o) { return bool_text(o.add_special_tokens); },
       [](E& o, const json& j) { j.get_to(o.add_special_tokens); },
       "true: Hugging Face's default; models were trained with [CLS]/<s> present",
       "false feeds the model inputs it never saw in training"},
      {"truncation_from_file", [](const E& o) { return bool_text(o.truncation_from_file); },
       [](E& o, const json& j) { j.get_to(o.truncation_from_file); },
       "true: tokenizer.json's declared truncation applies exactly as in Hugging Face",
       "a declared truncation drops tokens; pipelines report how many were dropped"},
      {"truncation", [](const E& o) { return truncation_text(o.truncation); },
       [](E&, const json&) { throw json::other_error::create(501, "set truncation with --truncation flags", nullptr); },
       "none: never drop tokens unless a policy is declared",
       "a policy drops text silently from the model's view; the response states the count"},
      {"padding_from_file", [](const E& o) { return bool_text(o.padding_from_file); },
       [](E& o, const json& j) { j.get_to(o.padding_from_file); },
       "true: tokenizer.json's declared padding applies exactly as in Hugging Face",
       "padding to a fixed length wastes compute on pad tokens"},
      {"padding", [](const E& o) { return padding_text(o.padding); },
       [](E&, const json&) { throw json::other_error::create(501, "set padding with --padding flags", nullptr); },
       "none: no pad tokens unless declared", "none"},
      {"offsets", [](const E& o) { return std::string(o.offsets == OffsetUnit::kChars ? "chars" : "bytes"); },
       [](E& o, const json& j) { o.offsets = j.get<std::string>() == "bytes" ? OffsetUnit::kBytes : OffsetUnit::kChars; },
       "chars (code points): what the Python and Node bindings report",
       "byte offsets differ from code points on any non-ASCII text"},
      {"fast_paths", [](const E& o) { return bool_text(o.fast_paths); },
       [](E& o, const json& j) { j.get_to(o.fast_paths); },
       "true: specialised component paths (per-char tables, single-pass splitters), identical output by differential tests",
       "a bug in a fast path would change tokens; false runs the general path to rule that out (slower)"},
  };
  return f;
}

const std::vector<Field<UnpadOptions>>& unpad_fields() {
  using U = UnpadOptions;
  static const std::vector<Field<U>> f = {
      GB_FIELD(U, mask_input, str_text, "attention_mask: the name torch.onnx and Optimum exports give the padding mask",
               "a model whose mask input has another name is refused by name, never guessed"),
      GB_FIELD(U, length_multiple, num_text,
               "1: each sequence runs at its exact length (least compute); pipelines use 8 to bound plans per length",
               "1 with widely varying lengths makes one plan per length (plan_cache_size evictions, re-planning)"),
      GB_FIELD(U, sequences_in_parallel, bool_text,
               "true: one sequence per thread, longest first (measured faster at batch 8 x 16..128 tokens)",
               "with fewer sequences than threads, or long sequences, false (all threads per sequence) is faster"),
  };
  return f;
}

const std::vector<Field<ProcessOptions>>& process_fields() {
  static const std::vector<Field<ProcessOptions>> f = {
      GB_FIELD(ProcessOptions, heap_policy, str_text,
               "retain: freed tensor memory is reused (blocks <= 32 MiB from the heap, no trim); a new shape's first run "
               "otherwise maps, faults and zeroes every large tensor anew (BERT-base per-text p95 1006 -> 388 ms)",
               "the process keeps its heap high-water mark (RSS does not shrink after a large batch); CLI only, "
               "a library user's process is never changed"),
  };
  return f;
}

// If an options struct gains a field, its table must gain a row (with a reason) too.
static_assert(aggregate_field_count<ProcessOptions>() == 1, "ProcessOptions changed: update process_fields() in explain.cpp");
static_assert(aggregate_field_count<SessionOptions>() == 19, "SessionOptions changed: update session_fields() in explain.cpp");
static_assert(aggregate_field_count<graph::LoadOptions>() == 8, "LoadOptions changed: update load_fields() in explain.cpp");
static_assert(aggregate_field_count<EncodeOptions>() == 7, "EncodeOptions changed: update encode_fields() in explain.cpp");
static_assert(aggregate_field_count<UnpadOptions>() == 3, "UnpadOptions changed: update unpad_fields() in explain.cpp");

template <class S>
void add_rows(const char* component, const std::vector<Field<S>>& fields, const S& effective,
              const std::map<std::string, std::string>& sources, std::vector<OptionExplanation>& rows) {
  const S defaults{};
  for (const auto& f : fields) {
    OptionExplanation e{component, f.name, f.get(effective), f.get(defaults), "default", f.reason, f.risk};
    auto it = sources.find(std::string(component) + "." + f.name);
    if (it != sources.end()) e.source = it->second;
    else if (e.value != e.default_value) e.source = "derived";
    rows.push_back(std::move(e));
  }
}

template <class S>
Status apply_section(const char* component, const json& section, const std::vector<Field<S>>& fields, S& target,
                     std::map<std::string, std::string>& sources) {
  return apply_option_section(component, section, fields, target, sources, "`glassbox explain` lists every option");
}

}  // namespace

Status apply_config(const json& config, EffectiveOptions& o) {
  if (!config.is_object()) return make_error(ErrorCode::kInvalidArgument, "config must be a JSON object");
  for (const auto& [key, value] : config.items()) {
    if (key == "session") GB_RETURN_IF_ERROR(apply_section("session", value, session_fields(), o.session, o.sources));
    else if (key == "load") GB_RETURN_IF_ERROR(apply_section("load", value, load_fields(), o.load, o.sources));
    else if (key == "encode") GB_RETURN_IF_ERROR(apply_section("encode", value, encode_fields(), o.encode, o.sources));
    else if (key == "unpad") GB_RETURN_IF_ERROR(apply_section("unpad", value, unpad_fields(), o.unpad, o.sources));
    else
      return make_error(ErrorCode::kInvalidArgument, "unknown config section '" + key + "'", {},
                        "sections: session, load, encode, unpad");
  }
  return {};
}

std::vector<OptionExplanation> explain_options(const EffectiveOptions& o) {
  std::vector<OptionExplanation> rows;
  add_rows("session", session_fields(), o.session, o.sources, rows);
  add_rows("load", load_fields(), o.load, o.sources, rows);
  add_rows("encode", encode_fields(), o.encode, o.sources, rows);
  add_rows("unpad", unpad_fields(), o.unpad, o.sources, rows);
  return rows;
}

std::optional<OptionDoc> session_option_doc(const std::string& name) {
  static const SessionOptions defaults;
  for (const auto& f : session_fields())
    if (name == f.name) return OptionDoc{f.get(defaults), f.reason, f.risk};
  return std::nullopt;
}

std::vector<OptionExplanation> explain_process_options() {
  std::vector<OptionExplanation> rows;
  std::map<std::string, std::string> sources;
  if (process_options_source() != "default") sources["process.heap_policy"] = process_options_source();
  add_rows("process", process_fields(), process_options(), sources, rows);
  if (!heap_policy_in_effect()) rows.back().value += " (not in effect: the allocator refused mallopt)";
  return rows;
}

std::string explain_to_text(const std::vector<OptionExplanation>& rows) {
  std::ostringstream s;
  std::string component;
  for (const auto& r : rows) {
    if (r.component != component) {
      component = r.component;
      s << (s.tellp() > 0 ? "\n" : "") << "[" << component << "]\n";
    }
    s << "  " << r.name << " = " << r.value << "  (" << r.source;
    if (r.source != "default") s << "; default " << r.default_value;
    s << ")\n    why:  " << r.reason << "\n    risk: " << r.risk << "\n";
  }
  return s.str();
}

std::string explain_to_markdown(const std::vector<OptionExplanation>& rows) {
  std::ostringstream s;
  s << "# Decisions glassbox makes for you, and why\n\n"
    << "Generated by `glassbox explain --markdown` from the option tables in the code; do not edit by hand.\n";
  std::string component;
  for (const auto& r : rows) {
    if (r.component != component) {
      component = r.component;
      s << "\n## " << component << "\n\n| option | default | why | risk |\n|---|---|---|---|\n";
    }
    s << "| `" << r.name << "` | `" << r.default_value << "` | " << r.reason << " | " << r.risk << " |\n";
  }
  return s.str();
}

nlohmann::ordered_json explain_to_json(const std::vector<OptionExplanation>& rows) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    j.push_back({{"component", r.component}, {"name", r.name}, {"value", r.value}, {"default", r.default_value},
                 {"source", r.source}, {"reason", r.reason}, {"risk", r.risk}});
  return nlohmann::ordered_json{{"schema", "glassbox.explain/1"}, {"options", j}};
}

nlohmann::ordered_json explain_model_json(const std::vector<OptionExplanation>& rows, const ModelExplanation& model) {
  auto j = explain_to_json(rows);
  if (!model.decisions.empty()) {
    j["pipeline"] = nlohmann::ordered_json::array();
    for (const auto& d : model.decisions) {
      j["pipeline"].push_back({{"field", d.field}, {"value", d.value}, {"source", d.source}});
      if (!d.risk.empty()) j["pipeline"].back()["risk"] = d.risk;
    }
  }
  if (!model.op_choices.empty()) {
    j["op_decisions"] = nlohmann::ordered_json::array();
    for (const auto& d : model.op_choices)
      j["op_decisions"].push_back({{"node", d.node}, {"op_type", d.op_type}, {"decision", d.decision}});
  }
  if (model.cache.state != "off" || !model.cache.reason.empty()) j["weights_cache"] = weights_cache_to_json(model.cache);
  return j;
}

nlohmann::ordered_json weights_cache_to_json(const WeightsCacheReport& r) {
  return {{"file", r.file},           {"state", r.state},         {"reason", r.reason},
          {"model_hash", r.model_hash}, {"model_hash_how", r.model_hash_how}, {"packings", r.packings},
          {"bytes", r.bytes},         {"open_ms", r.open_ms},     {"used", r.used},
          {"refused", r.refused},     {"refused_why", r.refused_why}, {"not_in_file", r.not_in_file},
          {"write", r.write}};
}

std::string weights_cache_to_text(const WeightsCacheReport& r) {
  if (r.state == "off" && r.reason.empty()) return {};
  std::ostringstream s;
  s << "  state: " << r.state << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n";
  if (!r.file.empty()) s << "  file: " << r.file << "\n";
  if (!r.model_hash.empty()) s << "  model: " << r.model_hash << " (" << r.model_hash_how << ")\n";
  if (r.state == "hit")
    s << "  packings: " << r.packings << " (" << r.bytes << " bytes), checked and mapped in " << r.open_ms << " ms\n";
  if (r.used || r.refused || r.not_in_file)
    s << "  served: " << r.used << ", refused: " << r.refused << (r.refused_why.empty() ? "" : " (" + r.refused_why + ")")
      << ", packed outside the file: " << r.not_in_file << "\n";
  if (!r.write.empty()) s << "  write: " << r.write << "\n";
  return s.str();
}

nlohmann::ordered_json cpu_report_to_json(const CpuReport& r) {
  nlohmann::ordered_json j;
  j["vendor"] = r.vendor;
  j["features"] = r.features;
  j["onednn"] = r.onednn;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const auto& k : r.kernels) j["kernels"].push_back({{"op_class", k.op_class}, {"kernel", k.kernel}, {"speed", k.speed}});
  j["precisions"] = nlohmann::ordered_json::array();
  for (const auto& p : r.precisions) {
    nlohmann::ordered_json e{{"precision", precision_name(p.precision)}, {"runs", p.runs}, {"how", p.how}};
    if (!p.runs) e["fix"] = p.fix;
    j["precisions"].push_back(std::move(e));
  }
  return j;
}

std::string cpu_report_to_text(const CpuReport& r) {
  std::ostringstream o;
  o << "cpu: " << r.vendor << "; features:";
  for (const auto& f : r.features) o << " " << f;
  if (r.features.empty()) o << " none beyond SSE2";
  o << "\n  " << r.onednn << "\n";
  for (const auto& k : r.kernels) o << "  " << k.op_class << ": " << k.kernel << "\n      speed: " << k.speed << "\n";
  for (const auto& p : r.precisions)
    o << "  precision " << precision_name(p.precision) << ": " << (p.runs ? "runs, " : "refused at load: ") << p.how
      << (p.runs ? "" : "; " + p.fix) << "\n";
  return o.str();
}

}  // namespace glassbox::diag
