#include "server/server.h"

#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>

#include "glassbox/pipeline.h"
#include "server/grpc/grpc_server.h"
#include "server/http/http_server.h"
#include "server/log.h"
#include "server/metrics/server_metrics.h"
#include "server/repository/model_memory.h"
#include "server/repository/repository.h"
#include "server/routes/router.h"
#include "server/scheduler/scheduler.h"

namespace glassbox::server {
namespace {

// Checks the drain every 20 ms: cheap, and a drained server exits within one tick.
constexpr int kDrainTickMs = 20;

struct Lifecycle {
  HttpServer& http;
  std::function<int64_t()> in_flight;  // HTTP + gRPC
  std::atomic<bool>& draining;
  double drain_timeout_s;
  std::chrono::steady_clock::time_point drain_started;
  int exit_code = 0;

  void on_signal(int sig) {
    if (draining.exchange(true)) {
      log_line("second signal: exiting at once with " + std::to_string(in_flight()) + " requests in flight");
      std::_Exit(1);
    }
    log_line(std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": draining " + std::to_string(in_flight()) +
             " in-flight requests (readiness is 503, new work is refused)");
    http.close_after_responses();
    drain_started = std::chrono::steady_clock::now();
    tick();
  }

  void tick() {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - drain_started).count();
    if (in_flight() == 0) {
      log_line("drained: every accepted request was answered; exiting");
      return http.stop();
    }
    if (waited >= drain_timeout_s) {
      log_line("drain timeout (" + std::to_string(drain_timeout_s) + " s) with " + std::to_string(in_flight()) +
               " requests still in flight; exiting with status 1");
      exit_code = 1;
      return http.stop();
    }
    http.after(kDrainTickMs, [this] { tick(); });
  }
};

}  // namespace

Result<int> serve(const ServeConfig& config) {
  ServerOptions opts = config.server;
  GB_ASSIGN_OR_RETURN(LogFormat log_format, parse_log_format(opts.log_format));
  set_log_format(log_format);
  GB_RETURN_IF_ERROR(check_numerics_options(opts));
  const bool kv_declared = config.sources.count("server.kv_cache_bytes") > 0;
  if (kv_declared) GB_RETURN_IF_ERROR(check_kv_budget_at_start(opts));  // docs/memory.md: a KV budget the budget cannot hold
  if (opts.prefill_chunk_tokens < 1)
    return make_error(ErrorCode::kInvalidArgument,
                      "prefill_chunk_tokens is " + std::to_string(opts.prefill_chunk_tokens) +
                          ": a prefill run must feed at least 1 prompt token",
                      "--prefill-chunk-tokens", "give a positive number of tokens (default 256)");
  if (opts.model_dirs.empty() && opts.model_repository.empty()) opts.model_dirs.push_back(default_model_dir());
  SessionOptions session = config.session;
  session.threads = opts.threads;

  // precision: serve --precision > the config file's session.precision > each model's
  // glassbox.json > fp32 (a given precision is an override, even when it is fp32).
  PipelineOptions engine;
  engine.session = session;
  if (auto it = config.sources.find("session.precision"); it != config.sources.end()) {
    engine.precision = config.session.precision;
    engine.precision_source = it->second == "flag" ? "flag --precision" : "serve --config file";
  }
  Metrics metrics;  // declared first: generation workers (owned by the repository's models) record into it until they stop
  declare_server_metrics(metrics);
  ServerOptions repository_options = opts;
  if (!kv_declared) repository_options.kv_cache_bytes = kKvDerived;  // kv_budget_for: derived under a model budget
  ModelRepository repository(repository_options, std::move(engine));
  GB_RETURN_IF_ERROR(repository.configure());
  Scheduler scheduler(opts, &metrics);
  std::atomic<bool> draining{false};
  HttpServer* http_ptr = nullptr;
  GrpcServer* grpc_ptr = nullptr;
  auto in_flight = [&http_ptr, &grpc_ptr] {
    return (http_ptr ? http_ptr->in_flight() : int64_t{0}) + (grpc_ptr ? grpc_ptr->in_flight() : int64_t{0});
  };
  ServerContext ctx{opts, repository, scheduler, draining,
                    server_options_to_json(explain_server_options(opts, config.sources)), metrics, in_flight};

  HttpServer http(
      opts, [&ctx](HttpRequest&& req, Responder respond) { route(ctx, std::move(req), std::move(respond)); },
      render_for_target);
  http_ptr = &http;
  GB_ASSIGN_OR_RETURN(int port, http.listen(opts.host, opts.port));
  log_line("listening on " + opts.host + ":" + std::to_string(port) + " (live now; ready after every model's load and warm-up)");
  GrpcServer grpc(ctx);  // after the HTTP line: scripts read the HTTP port from the first "listening on"
  if (opts.grpc_port != 0) {
    GB_ASSIGN_OR_RETURN(int grpc_port, grpc.listen(opts.host, opts.grpc_port));
    grpc_ptr = &grpc;
    log_line("gRPC (KServe v2 GRPCInferenceService) on " + opts.host + ":" + std::to_string(grpc_port));
  }

  repository.set_metrics(&metrics);
  repository.set_load_observer([&metrics](const std::string& name, bool ok) {
    metrics.add("glassbox_model_loads_total", {{"model", name}, {"result", ok ? "success" : "failure"}});
  });
  Lifecycle life{http, in_flight, draining, opts.drain_timeout_s, {}};
  http.on_signal([&life, &repository, &opts](int sig) {
    // Generation models finish in-flight sequences within the drain, then cut them explicitly.
    for (const auto& e : repository.index())
      if (auto m = repository.get(e.name).model; m && m->generator) m->generator->begin_drain(opts.drain_timeout_s);
    life.on_signal(sig);
  });
  repository.load_all([&repository] {
    size_t ready = 0, total = 0;
    for (const auto& e : repository.index()) {
      ++total;
      ready += e.state == "READY";
    }
    log_line(std::to_string(ready) + " of " + std::to_string(total) + " models ready" +
             (repository.ready() ? "; server ready" : "; server not ready (no model loaded)"));
  });
  http.run(std::max(1, opts.io_threads));
  scheduler.stop(/*run_queued=*/life.exit_code == 0);
  grpc.shutdown(/*grace_s=*/1);  // every call is answered by now (drained, or refused by the stopped scheduler)
  repository.stop();
  return life.exit_code;
}

}  // namespace glassbox::server
