// Every setting of `glassbox serve`, each with its default and why. `glassbox explain
// --serve` prints them (value, source, reason, risk) from the table in server_options.cpp;
// a --config file's "server" object holds the same fields.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::server {

struct ServerOptions {
  // Model directories given on the command line (each served under its folder name).
  // Empty with no repository: the embedded default model (langid).
  std::vector<std::string> model_dirs;
  // A folder whose sub-folders are models (model directory or Triton-style version folders).
  std::string model_repository;
  // Loopback by default: a server must be exposed on purpose (containers pass 0.0.0.0).
  std::string host = "127.0.0.1";
  // 8080: KServe's and Triton's HTTP port, so manifests and clients work unchanged.
  int port = 8080;
  // 0 = no gRPC listener: HTTP alone is what most clients use, and a second open port is opened
  // on purpose. 8001 is Triton's gRPC port (KServe's predictor uses 8081).
  int grpc_port = 0;
  // Compute threads of each engine run (0 = physical cores): one run at a time server-wide
  // uses exactly these cores, so several models never oversubscribe them.
  int threads = 0;
  // HTTP/IO threads: parsing and writing only (compute runs elsewhere); 1 keeps a core for compute.
  int io_threads = 1;
  // 16 MiB: a batch of 64 texts of 512 tokens is ~1 MiB JSON; binary tensors of BERT-base inputs are far below.
  int64_t max_body_bytes = int64_t{16} << 20;
  // 16 KiB of request line + headers (431 beyond): browsers and clients send < 2 KiB.
  int64_t max_header_bytes = 16 << 10;
  // Header fields per request (431 beyond).
  int max_header_count = 100;
  // Time for a client to send a request's headers (slowloris defence), also the keep-alive idle limit.
  int header_timeout_ms = 10000;
  // Time for a client to send the body once the headers are in.
  int body_timeout_ms = 30000;
  // SIGTERM/SIGINT: in-flight requests get this long to finish before the server exits.
  double drain_timeout_s = 30;
  // JSON nesting depth (objects/arrays): OIP nested tensors of rank 8 need ~12.
  int max_json_depth = 64;
  // Tensors per OIP request (inputs + requested outputs).
  int max_inputs_per_request = 64;
  // Elements per OIP tensor, checked from the declared shape before anything is allocated:
  // 2^26 (64 Mi) is 256 MiB of FP32, far above a BERT-base batch and below the body cap's reach.
  int64_t max_tensor_elements = int64_t{1} << 26;
  // Texts per request (TEI/OpenAI "inputs", OIP "text" elements): TEI's max_client_batch_size is 32.
  int max_texts_per_request = 256;
  // Seconds between scans of --model-repository for changed models (0 = only explicit load calls).
  double repository_poll_s = 0;
  // --- scheduling (per model) ---
  // Requests waiting per model before 429 + Retry-After: bounded queue x bounded body = bounded memory.
  int max_queue = 64;
  // Real (unpadded) tokens per engine run: 8192 = 64 texts of 128 tokens; beyond it a run's latency grows linearly.
  int64_t max_batch_tokens = 8192;
  // Texts (or tensor rows) per engine run.
  int max_batch_size = 32;
  // 0: a batch is formed from what is already waiting, never by holding a request back for company.
  int max_queue_delay_ms = 0;
  // --- generation models (docs/serving.md, "Generation") ---
  // KV cache bytes all sequences in flight on one generation model may reserve together; a request
  // reserves (prompt + max_new_tokens) x bytes per token when admitted. 2 GiB: ~87k tokens of a
  // Qwen2.5-0.5B-shaped model (24 KiB/token fp32), the generation session's own default.
  int64_t kv_cache_bytes = int64_t{2} << 30;
  // Prompt tokens one prefill run feeds (padded, over the prompts it batches); a longer prompt runs
  // in chunks with decode steps of the other streams between them. 256: the generation session's
  // own default (GenerationOptions::prefill_chunk_tokens). Must be >= 1.
  int64_t prefill_chunk_tokens = 256;
  // A request's deadline when it sends none (0 = none): work past it is dropped before compute (504).
  int64_t default_timeout_ms = 0;
  // Engine runs that carry the first-non-finite-node observer (scheduler/numerics_sampling.h): "off",
  // "sampled" (the 1st and then one in numerics_sample_every runs of each model) or "all". The observer
  // reads every node's float outputs (+6 to +9 % on DistilBERT-base, docs/diagnostics.md); one run in
  // 100 costs < 0.1 % on average and still names the node of a NaN that a later op hides.
  std::string numerics_check = "sampled";
  int64_t numerics_sample_every = 100;
  // Top-1 softmax probability counted by glassbox_softmax_saturated_total.
  double saturation_threshold = 0.99;
  // One line per answered request on stdout (request and trace ids, route, model, status,
  // queue/compute ms, bytes, tokens, batch size), written in log_format.
  bool access_log = false;
  // "text": event lines a person reads in a terminal; "json": one object per line (events on
  // stderr, access lines on stdout) for log shippers. Every line of a request carries its ids.
  std::string log_format = "text";
  // --- warm-up (docs/serving.md, "Warm-up") ---
  // When a warm-up under *derived* shapes fails: "ready" serves the model anyway (state READY,
  // reason "ready without warm-up: ..."), "unavailable" keeps it out. A declared warm-up that
  // fails always keeps the model UNAVAILABLE.
  std::string warmup_failure = "ready";
  // The derivation rule for models that declare no warm-up: symbolic batch dims, symbolic
  // height/width of a rank-4 image input, and every other symbolic dim.
  int64_t warmup_batch_size = 1;
  int64_t warmup_sequence_length = 16;
  int64_t warmup_image_size = 224;
  // Declared warm-ups by model name ({"NAME": {"inputs": {...}}}): win over the model's glassbox.json.
  nlohmann::json model_warmup = nlohmann::json::object();
  // --- memory (docs/memory.md) ---
  // Server-wide memory budget in bytes (config: bytes or "4G"); 0 = off (the right figure is the machine's and
  // the deployment's). With it, the process plus every loaded model's estimate must fit: a model that does not
  // fit what the others leave is refused at load (UNAVAILABLE, its reason naming the numbers); unload frees it.
  int64_t max_memory = 0;
  // Per-model budgets by model name ({"NAME": "512M"}): win over the model's glassbox.json "max_memory".
  nlohmann::json model_max_memory = nlohmann::json::object();
};

struct ServerOptionRow {
  std::string name, value, default_value, source, reason, risk;
};

// component "server" of a --config file; unknown keys are errors naming the key.
Status apply_server_config(const nlohmann::json& config, ServerOptions& options, std::map<std::string, std::string>& sources);
// Copies every field whose source is "flag" from `from` into `to` (flags win over a config file).
void copy_flagged_fields(const ServerOptions& from, const std::map<std::string, std::string>& sources, ServerOptions& to);
std::vector<ServerOptionRow> explain_server_options(const ServerOptions& options,
                                                    const std::map<std::string, std::string>& sources);
nlohmann::ordered_json server_options_to_json(const std::vector<ServerOptionRow>& rows);

}  // namespace glassbox::server
