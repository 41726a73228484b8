#include "server/server_options.h"

#include <functional>

#include "core/aggregate_fields.h"
#include "core/option_table.h"
#include "core/process_memory.h"

namespace glassbox::server {
namespace {

using nlohmann::json;

using Field = OptionField<ServerOptions>;  // core/option_table.h: the table mechanism explain's tables use too

std::string text(const std::string& s) { return s; }
std::string text(bool b) { return b ? "true" : "false"; }
std::string text(const std::vector<std::string>& v) { return list_text(v); }
std::string text(const json& j) { return j.dump(); }
template <class T>
std::string text(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char b[32];
    snprintf(b, sizeof b, "%g", v);
    return b;
  } else {
    return std::to_string(v);
  }
}

#define GB_SERVER_FIELD(field, reason, risk) GB_OPTION_FIELD(ServerOptions, field, text, reason, risk)

// Where models come from, the listener and the HTTP limits.
std::vector<Field> http_fields() {
  return {
      GB_SERVER_FIELD(model_dirs, "none: with no repository either, the embedded default model (langid) is served",
                      "each directory is loaded and warmed before the server reports ready"),
      GB_SERVER_FIELD(model_repository, "none: models come from the command line",
                      "every sub-folder is loaded at start; a folder that fails is reported in the index, not fatal"),
      GB_SERVER_FIELD(host, "127.0.0.1: a server is exposed on purpose, never by default",
                      "0.0.0.0 exposes every route (including load/unload) to the network: put it behind a proxy"),
      GB_SERVER_FIELD(port, "8080: KServe's and Triton's HTTP port, so manifests and clients work unchanged",
                      "a port below 1024 needs privileges; 0 picks a free port (printed at start)"),
      GB_SERVER_FIELD(grpc_port,
                      "0 = off: the KServe v2 gRPC service (same models, scheduler, limits, metrics and drain as HTTP) "
                      "listens only when asked; Triton's is 8001",
                      "a second listener on host: it carries every OIP and repository method, load/unload included; "
                      "messages are capped by max_body_bytes"),
      GB_SERVER_FIELD(threads, "0 = physical cores; one engine run at a time server-wide uses exactly these",
                      "more than the cores oversubscribes them and raises p99"),
      GB_SERVER_FIELD(io_threads, "1: parsing, tokenizing text requests and writing are cheap next to compute, which runs on the engine's threads",
                      "more IO threads compete with compute for the same cores"),
      GB_SERVER_FIELD(max_body_bytes, "16 MiB: 64 texts of 512 tokens are ~1 MiB of JSON",
                      "higher lets each connection hold more memory; lower refuses big binary tensors (413)"),
      GB_SERVER_FIELD(max_header_bytes, "16 KiB: clients send under 2 KiB of headers",
                      "higher lets slow or hostile clients pin more memory per connection"),
      GB_SERVER_FIELD(max_header_count, "100 fields: far above what clients send",
                      "higher costs parsing time per request"),
      GB_SERVER_FIELD(header_timeout_ms, "10 s to send the headers (and the keep-alive idle limit): slowloris defence",
                      "too low drops clients on slow links; too high lets idle sockets pile up"),
      GB_SERVER_FIELD(body_timeout_ms, "30 s to send the body after the headers",
                      "too low fails large uploads on slow links"),
      GB_SERVER_FIELD(drain_timeout_s, "30 s for in-flight requests after SIGTERM (Kubernetes' default grace period)",
                      "must stay below terminationGracePeriodSeconds, or the pod is killed mid-drain"),
      GB_SERVER_FIELD(max_json_depth, "64 levels: OIP tensors of rank 8 need ~12; deeper is an attack",
                      "higher lets a crafted body cost more parse time"),
      GB_SERVER_FIELD(max_inputs_per_request, "64 tensors per OIP request",
                      "higher lets one request hold more memory"),
      GB_SERVER_FIELD(max_tensor_elements,
                      "2^26 elements per OIP tensor (256 MiB of FP32), checked from the shape before allocation",
                      "higher lets one declared shape claim more memory; binary tensors are also bounded by max_body_bytes"),
      GB_SERVER_FIELD(max_texts_per_request, "256 texts per request (TEI's default is 32)",
                      "higher lets one request occupy the compute queue longer"),
  };
}

// Repository polling, scheduling and batching, generation's KV budget, deadlines, logs.
std::vector<Field> scheduling_fields() {
  return {
      GB_SERVER_FIELD(repository_poll_s, "0: models change only through explicit load calls",
                      "polling reloads a version as soon as its files change: write new versions to a new folder"),
      GB_SERVER_FIELD(max_queue, "64 requests per model: with 16 MiB bodies at most 1 GiB queued; usually far less",
                      "higher absorbs longer bursts but lets latency grow before clients hear 429"),
      GB_SERVER_FIELD(max_batch_tokens, "8192 real tokens per engine run (64 texts of 128 tokens), no padding counted",
                      "higher raises throughput a little and the latency of every request in the run a lot"),
      GB_SERVER_FIELD(max_batch_size, "32 texts, tensor rows or an image embedder's images per engine run",
                      "higher makes runs longer; 1 turns batching off"),
      GB_SERVER_FIELD(max_queue_delay_ms, "0: never hold a request back hoping for company; batches form from what waits",
                      "a delay adds that much latency to a lone request for a fuller batch under light load"),
      GB_SERVER_FIELD(kv_cache_bytes,
                      "2 GiB per generation model: ~87k tokens of a Qwen2.5-0.5B-shaped model; a request reserves "
                      "(prompt + max_new_tokens) x bytes/token at admission, so memory never grows mid-generation",
                      "lower makes long requests wait (queue, then 429) or be refused (413 when one alone exceeds it); "
                      "higher than free memory risks the OOM killer under many concurrent streams"),
      GB_SERVER_FIELD(prefill_chunk_tokens,
                      "256 prompt tokens per prefill run: a prompt up to 256 tokens is one run; a longer one runs in "
                      "chunks with a decode step of the other streams between two, so it pauses them by one chunk's run, "
                      "not by the whole prompt (the same tokens either way)",
                      "lower: long prompts take more runs, each copying the K/V so far in, so their time to first token "
                      "grows; higher: a long prompt pauses every other stream longer. 0 is refused"),
      GB_SERVER_FIELD(default_timeout_ms, "0 = no deadline unless the request sends one (parameters.timeout, X-Request-Timeout-Ms)",
                      "a deadline drops work a client has given up on; too short drops work under normal load (504)"),
      GB_SERVER_FIELD(numerics_check,
                      "sampled: an internal NaN/Inf that a later op hides from the outputs is counted by node "
                      "(glassbox_nonfinite_internal_total) on the observed runs; the observer reads every node's float "
                      "outputs (+6 to +9 % per observed run on DistilBERT-base), never changes an answer",
                      "sampled can miss a NaN that only rare inputs cause (outputs are still scanned on every run: "
                      "glassbox_nonfinite_outputs_total); \"all\" pays the observer on every run; \"off\" sees only outputs"),
      GB_SERVER_FIELD(numerics_sample_every,
                      "100: the 1st run of each model and then one in 100 carry the observer (< 0.1 % average cost)",
                      "lower finds rare internal NaNs sooner and costs more; 1 equals numerics_check \"all\""),
      GB_SERVER_FIELD(saturation_threshold, "0.99: a top-1 probability this high on most traffic means a saturated softmax",
                      "only changes what glassbox_softmax_saturated_total counts"),
      GB_SERVER_FIELD(access_log, "false: metrics carry the aggregates; a line per request costs IO at high rates",
                      "true writes one line per request to stdout (in log_format)"),
      GB_SERVER_FIELD(log_format,
                      "text: a person starting `glassbox serve` reads its lines in a terminal; \"json\" writes one object "
                      "per line (time, type, request_id, trace_id, ...) for log shippers",
                      "text lines are not meant to be parsed: pick json when a collector reads the logs"),
  };
}

// Warm-up: the policy on failure and the derivation rule's shapes.
std::vector<Field> warmup_fields() {
  return {
      GB_SERVER_FIELD(warmup_failure,
                      "ready: a warm-up under derived (guessed) shapes that fails says more about the guess than about the "
                      "model, which loaded, passed the checker and shape inference; the model serves and its index reason "
                      "says \"ready without warm-up\" with the error",
                      "a model that fails on every input is READY and fails its first request (the index shows why); "
                      "\"unavailable\" keeps such models out. A declared warm-up that fails always keeps the model out"),
      GB_SERVER_FIELD(warmup_batch_size, "1: the smallest batch; every model accepts it and it costs least",
                      "a model whose batch dim must be larger fails its derived warm-up: declare the warm-up"),
      GB_SERVER_FIELD(warmup_sequence_length,
                      "16: special tokens plus a short sentence, and room for small conv/pool windows over time; cheap",
                      "models that need a longer axis (raw audio into an STFT-as-Conv: openWakeWord's melspectrogram "
                      "needs 512+ samples) fail the derived warm-up: declare their warm-up shape"),
      GB_SERVER_FIELD(warmup_image_size,
                      "224: the input size of ImageNet backbones; 7 x 32, so every stride-32 detector/classifier divides it",
                      "one 224x224 run costs load time; a network needing another size (or a multiple of 64) fails its "
                      "derived warm-up: declare the warm-up"),
      GB_SERVER_FIELD(model_warmup,
                      "{}: each model's glassbox.json \"warmup\" declares it, else the derivation rule above",
                      "a declaration here wins over the model's glassbox.json; its shapes must fit the model or the model "
                      "stays UNAVAILABLE"),
  };
}

// The memory budget: server-wide and per model (docs/memory.md).
std::vector<Field> memory_fields() {
  return {
      {"max_memory", [](const ServerOptions& o) { return o.max_memory > 0 ? std::to_string(o.max_memory) : std::string("off"); },
       [](ServerOptions& o, const json& j) {
         if (j.is_number_integer()) {
           j.get_to(o.max_memory);
           return;
         }
         auto b = parse_byte_size(j.get<std::string>());
         if (!b.ok()) throw json::other_error::create(501, b.error().what, nullptr);
         o.max_memory = *b;
       },
       "off: the right budget is the machine's and the deployment's, not ours; with one, the process and every loaded "
       "model's estimate (weights, tokenizer, run tensors at max_batch_size x max_length or an image model's largest "
       "declared input, a decoder's kv_cache_bytes) "
       "must fit, and a model that does not fit what the others leave is refused at load",
       "off: many models or large shapes end in the OOM killer, not an Error; a tensor model's account is its weights, "
       "its load's growth and its warm-up shape, its runs are limited to what was left at its load",
       [](const ServerOptions& from, ServerOptions& to) { to.max_memory = from.max_memory; }},
      GB_SERVER_FIELD(model_max_memory,
                      "{}: each model's glassbox.json \"max_memory\" (or none); a value here wins over it",
                      "a model over its own budget is refused at load (UNAVAILABLE) even when the server has room"),
  };
}

// Every field of ServerOptions, in declaration order.
const std::vector<Field>& fields() {
  static const std::vector<Field> f = [] {
    std::vector<Field> all;
    for (auto group : {http_fields(), scheduling_fields(), warmup_fields(), memory_fields()}) all.insert(all.end(), group.begin(), group.end());
    return all;
  }();
  return f;
}

static_assert(aggregate_field_count<ServerOptions>() == 37, "ServerOptions changed: update fields() in server_options.cpp");

}  // namespace

Status apply_server_config(const json& config, ServerOptions& options, std::map<std::string, std::string>& sources) {
  return apply_option_section("server", config, fields(), options, sources, "see `glassbox explain --serve` for the fields");
}

void copy_flagged_fields(const ServerOptions& from, const std::map<std::string, std::string>& sources, ServerOptions& to) {
  for (const auto& f : fields()) {
    auto it = sources.find(std::string("server.") + f.name);
    if (it != sources.end() && it->second == "flag") f.copy(from, to);
  }
}

std::vector<ServerOptionRow> explain_server_options(const ServerOptions& options,
                                                    const std::map<std::string, std::string>& sources) {
  static const ServerOptions defaults;
  std::vector<ServerOptionRow> rows;
  for (const auto& f : fields()) {
    auto it = sources.find(std::string("server.") + f.name);
    rows.push_back({f.name, f.get(options), f.get(defaults), it == sources.end() ? "default" : it->second, f.reason, f.risk});
  }
  return rows;
}

nlohmann::ordered_json server_options_to_json(const std::vector<ServerOptionRow>& rows) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    out.push_back({{"component", "server"}, {"name", r.name}, {"value", r.value}, {"default", r.default_value},
                   {"source", r.source}, {"reason", r.reason}, {"risk", r.risk}});
  return out;
}

}  // namespace glassbox::server
