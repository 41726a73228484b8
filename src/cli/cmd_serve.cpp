// glassbox serve [MODEL_DIR...] [--model-repository DIR] [--host H] [--port P] [--threads N] ...
// Every flag is a field of server::ServerOptions (its default and reason: `glassbox explain --serve`).
#include <optional>
#include <string>

#include "cli/serve_config.h"
#include "core/process_memory.h"
#include "cli/session_flags.h"

namespace {

struct ServeArgs {
  glassbox::server::ServeConfig config;
  std::string config_file;
  glassbox::cli::SessionFlags session;  // --precision, --weights-cache, --pool-wait: over the config file and glassbox.json
};

template <class T>
void add_server_flag(CLI::App* cmd, ServeArgs& a, const std::string& flag, const std::string& field, T& target,
                     const std::string& help) {
  cmd->add_option_function<T>(flag, [&a, &target, field](const T& v) {
       target = v;
       a.config.sources["server." + field] = "flag";
     }, help + " (default: " + CLI::detail::to_string(target) + "; `glassbox explain --serve` says why)");
}

// --max-memory BYTES (4G, 512M): ServerOptions::max_memory, a size rather than a bare number.
void add_max_memory_flag(CLI::App* cmd, ServeArgs& a) {
  cmd->add_option_function<std::string>("--max-memory", [&a](const std::string& v) {
       a.config.server.max_memory = glassbox::parse_byte_size(v).value();
       a.config.sources["server.max_memory"] = "flag";
     }, "BYTES (4G, 512M): server-wide memory budget: the process and every loaded model's estimate must fit; a model "
        "that does not fit what the others leave is refused at load (default: off; `glassbox explain --serve` says why)")
      ->check([](const std::string& v) {
        auto b = glassbox::parse_byte_size(v);
        return b.ok() ? std::string() : b.error().to_string();
      });
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve models over HTTP: KServe v2 / Open Inference Protocol, Triton's repository "
                                          "API, TEI text routes, OpenAI embeddings (default: the embedded langid model)");
  auto a = std::make_shared<ServeArgs>();
  auto& s = a->config.server;
  cmd->add_option("models", s.model_dirs, "model directories to serve, each under its folder name");
  add_server_flag(cmd, *a, "--model-repository", "model_repository", s.model_repository,
                  "folder of models: MODEL/model.onnx or Triton-style MODEL/<version>/model.onnx");
  add_server_flag(cmd, *a, "--host", "host", s.host, "address to listen on");
  add_server_flag(cmd, *a, "--port", "port", s.port, "TCP port (0 = a free one, printed at start)");
  add_server_flag(cmd, *a, "--grpc-port", "grpc_port", s.grpc_port, "KServe v2 gRPC port (0 = no gRPC listener)");
  add_server_flag(cmd, *a, "--threads", "threads", s.threads, "compute threads of each engine run (0 = physical cores)");
  add_server_flag(cmd, *a, "--io-threads", "io_threads", s.io_threads, "HTTP threads");
  add_server_flag(cmd, *a, "--max-body-bytes", "max_body_bytes", s.max_body_bytes, "request body cap (413 beyond)");
  add_server_flag(cmd, *a, "--max-header-bytes", "max_header_bytes", s.max_header_bytes, "request header cap (431 beyond)");
  add_server_flag(cmd, *a, "--max-header-count", "max_header_count", s.max_header_count, "header fields cap (431 beyond)");
  add_server_flag(cmd, *a, "--header-timeout-ms", "header_timeout_ms", s.header_timeout_ms, "time to send headers / keep-alive idle");
  add_server_flag(cmd, *a, "--body-timeout-ms", "body_timeout_ms", s.body_timeout_ms, "time to send the body");
  add_server_flag(cmd, *a, "--drain-timeout", "drain_timeout_s", s.drain_timeout_s, "seconds in-flight requests get after SIGTERM");
  add_server_flag(cmd, *a, "--max-json-depth", "max_json_depth", s.max_json_depth, "JSON nesting cap");
  add_server_flag(cmd, *a, "--max-inputs-per-request", "max_inputs_per_request", s.max_inputs_per_request, "OIP tensors per request");
  add_server_flag(cmd, *a, "--max-tensor-elements", "max_tensor_elements", s.max_tensor_elements,
                  "elements per OIP tensor, checked before allocation");
  add_server_flag(cmd, *a, "--max-texts-per-request", "max_texts_per_request", s.max_texts_per_request, "texts per request");
  add_server_flag(cmd, *a, "--repository-poll", "repository_poll_s", s.repository_poll_s,
                  "seconds between scans of the repository for changed models (0 = off)");
  add_server_flag(cmd, *a, "--max-queue", "max_queue", s.max_queue, "requests waiting per model before 429");
  add_server_flag(cmd, *a, "--max-batch-tokens", "max_batch_tokens", s.max_batch_tokens, "real tokens per engine run");
  add_server_flag(cmd, *a, "--max-batch-size", "max_batch_size", s.max_batch_size, "texts or tensor rows per engine run");
  add_server_flag(cmd, *a, "--max-queue-delay-ms", "max_queue_delay_ms", s.max_queue_delay_ms, "wait for a fuller batch");
  add_server_flag(cmd, *a, "--kv-cache-bytes", "kv_cache_bytes", s.kv_cache_bytes,
                  "KV cache bytes per generation model (requests reserve prompt + max_new_tokens at admission)");
  add_server_flag(cmd, *a, "--prefill-chunk-tokens", "prefill_chunk_tokens", s.prefill_chunk_tokens,
                  "prompt tokens per prefill run of a generation model; longer prompts run in chunks between decode steps");
  add_max_memory_flag(cmd, *a);
  add_server_flag(cmd, *a, "--default-timeout-ms", "default_timeout_ms", s.default_timeout_ms, "deadline of requests that send none (0 = none)");
  add_server_flag(cmd, *a, "--numerics-check", "numerics_check", s.numerics_check,
                  "off | sampled | all: engine runs that carry the first-non-finite-node observer");
  add_server_flag(cmd, *a, "--numerics-sample-every", "numerics_sample_every", s.numerics_sample_every,
                  "with --numerics-check sampled: one observed run in N per model");
  add_server_flag(cmd, *a, "--saturation-threshold", "saturation_threshold", s.saturation_threshold, "top-1 probability counted as saturated");
  add_server_flag(cmd, *a, "--warmup-failure", "warmup_failure", s.warmup_failure,
                  "ready | unavailable: a model whose warm-up under derived shapes fails still serves, or not "
                  "(a declared warm-up that fails always keeps it out)");
  add_server_flag(cmd, *a, "--warmup-batch-size", "warmup_batch_size", s.warmup_batch_size,
                  "derived warm-up: value of symbolic batch dims");
  add_server_flag(cmd, *a, "--warmup-sequence-length", "warmup_sequence_length", s.warmup_sequence_length,
                  "derived warm-up: value of symbolic dims that are neither batch nor image height/width");
  add_server_flag(cmd, *a, "--warmup-image-size", "warmup_image_size", s.warmup_image_size,
                  "derived warm-up: symbolic height/width of rank-4 image inputs");
  using glassbox::cli::SessionFlag;  // every model's session; --threads above is the server's own (ServerOptions)
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kPrecision, SessionFlag::kWeightsCache, SessionFlag::kPoolWait});
  cmd->add_flag_function("--access-log", [a](int64_t) {
       a->config.server.access_log = true;
       a->config.sources["server.access_log"] = "flag";
     }, "one JSON line per request on stdout (default: off)");
  add_server_flag(cmd, *a, "--log-format", "log_format", s.log_format,
                  "text | json: how event lines (stderr) and access lines (stdout) are written");
  cmd->add_option("--config", a->config_file, "JSON file {\"server\":{...},\"session\":{...}}; flags win (default: none)");
  cmd->callback([a] {
    using namespace glassbox;
    server::ServeConfig config = a->config;
    if (!a->config_file.empty()) {
      server::ServeConfig from_file;
      cli::apply_serve_config_file("serve", a->config_file, from_file);
      server::copy_flagged_fields(a->config.server, a->config.sources, from_file.server);
      for (const auto& [key, source] : a->config.sources) from_file.sources[key] = source;
      if (!a->config.server.model_dirs.empty()) from_file.server.model_dirs = a->config.server.model_dirs;
      config = from_file;
    }
    a->session.apply(config.session, &config.sources);
    auto code = server::serve(config);
    if (!code.ok()) cli::fail("serve", code.error());
    if (*code != 0) throw CLI::RuntimeError(*code);
  });
}
