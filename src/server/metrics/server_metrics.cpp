#include "server/metrics/server_metrics.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "server/log.h"
#include "server/routes/image_routes.h"
#include "server/routes/router.h"

namespace glassbox::server {

void declare_server_metrics(Metrics& m) {
  using T = Metrics::Type;
  const auto lat = latency_buckets();
  m.declare("glassbox_request_duration_seconds", T::kHistogram, "Time from a request's arrival to its response, by route.", lat);
  m.declare("glassbox_queue_duration_seconds", T::kHistogram, "Time a request waited before its first engine run.", lat);
  m.declare("glassbox_compute_duration_seconds", T::kHistogram, "Duration of one engine run (a batch).", lat);
  m.declare("glassbox_batch_size", T::kHistogram, "Texts or tensor rows per engine run.", {1, 2, 4, 8, 16, 32, 64, 128, 256});
  m.declare("glassbox_batch_tokens", T::kHistogram, "Real (unpadded) tokens per engine run.",
            {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384});
  m.declare("glassbox_input_tokens", T::kHistogram, "Tokens per input text after truncation.", {8, 16, 32, 64, 128, 256, 512, 1024, 2048});
  m.declare("glassbox_requests_total", T::kCounter, "Requests answered, by model, route and status code.");
  m.declare("glassbox_rejected_requests_total", T::kCounter,
            "Requests refused, by reason: queue_full, deadline, too_large, invalid, draining, unavailable, cancelled.");
  m.declare("glassbox_truncated_inputs_total", T::kCounter, "Input texts cut to the model's max_length (declared or requested policy).");
  m.declare("glassbox_truncated_tokens_total", T::kCounter, "Tokens dropped by truncation.");
  m.declare("glassbox_padding_tokens_total", T::kCounter, "Positions computed on padding (0 on the unpadded path).");
  m.declare("glassbox_nonfinite_outputs_total", T::kCounter, "Engine runs whose output held NaN or Inf, by output.");
  m.declare("glassbox_nonfinite_internal_total", T::kCounter,
            "Observed engine runs (--numerics-check) in which a node wrote NaN or Inf, by the first such node and its kind.");
  m.declare("glassbox_predictions_total", T::kCounter, "Classifications by top-1 label.");
  m.declare("glassbox_prediction_confidence", T::kHistogram, "Top-1 softmax probability of classifications.",
            {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999});
  m.declare("glassbox_softmax_saturated_total", T::kCounter, "Classifications whose top-1 probability reached the saturation threshold.");
  m.declare("glassbox_model_loads_total", T::kCounter, "Model loads by result (success, failure).");
  m.declare("glassbox_queue_depth", T::kGauge, "Requests waiting for compute, by model.");
  m.declare("glassbox_inflight_requests", T::kGauge, "Requests accepted and not yet answered.");
  m.declare("glassbox_model_ready", T::kGauge, "1 when the model version serves, 0 when not.");
  declare_generation_metrics(m);
  declare_image_metrics(m);
}

// Generation models (docs/serving.md, "Generation metrics"): intervals from one monotonic clock,
// time to first token from the request's arrival (queueing counts), time per output token =
// (e2e - TTFT) / (tokens - 1) for requests of 2 tokens or more.
void declare_generation_metrics(Metrics& m) {
  using T = Metrics::Type;
  const auto lat = latency_buckets();
  m.declare("glassbox_time_to_first_token_seconds", T::kHistogram, "Arrival to the first generated token (queue + prefill), by model.", lat);
  m.declare("glassbox_time_per_output_token_seconds", T::kHistogram,
            "(e2e - time to first token) / (tokens - 1) of requests with 2 or more tokens, by model.", lat);
  m.declare("glassbox_generation_e2e_seconds", T::kHistogram, "Arrival to the end of a generation (any finish), by model.", lat);
  m.declare("glassbox_generation_queue_seconds", T::kHistogram, "Arrival to admission (waiting for KV cache room), by model.", lat);
  m.declare("glassbox_generation_prefill_seconds", T::kHistogram, "Duration of one prefill engine run: one chunk (at most --prefill-chunk-tokens padded tokens) of one or more prompts.", lat);
  m.declare("glassbox_decode_step_seconds", T::kHistogram, "Duration of one decode step (every active sequence advanced by one token).", lat);
  m.declare("glassbox_decode_batch_size", T::kHistogram, "Sequences advanced together by one decode step.", {1, 2, 4, 8, 16, 32, 64, 128});
  const std::vector<double> tokens = {1, 4, 16, 64, 256, 1024, 4096, 16384};
  m.declare("glassbox_prompt_tokens", T::kHistogram, "Prompt tokens per admitted generation request.", tokens);
  m.declare("glassbox_completion_tokens", T::kHistogram, "Tokens generated per request (any finish).", tokens);
  m.declare("glassbox_generated_tokens_total", T::kCounter, "Tokens generated, by model.");
  m.declare("glassbox_generation_requests_total", T::kCounter,
            "Generation requests ended, by finish_reason: stop, length, error (non-finite logits or engine failure), "
            "client_gone, deadline, draining, server_stopped.");
  m.declare("glassbox_generation_stops_total", T::kCounter,
            "Generations ended by a stop rule, by rule: stop_token (one of the policy's stop_token_ids), stop_string "
            "(one of its stop strings), max_new_tokens (the request's, after the context cap).");
  m.declare("glassbox_generation_nonfinite_logits_total", T::kCounter,
            "Generations cut because a logits row held NaN or Inf (finish_reason error), by model.");
  m.declare("glassbox_generation_rejected_total", T::kCounter,
            "Generation requests refused before admission, by reason: too_long (max_context), kv_budget (can never fit), "
            "queue_full, draining, invalid.");
  m.declare("glassbox_active_sequences", T::kGauge, "Sequences being generated, by model.");
  m.declare("glassbox_waiting_sequences", T::kGauge, "Generation requests waiting for KV cache room, by model.");
  m.declare("glassbox_kv_cache_bytes", T::kGauge, "KV cache bytes reserved by sequences in flight (state=used) and the budget (state=budget).");
}

void record_request(ServerContext& ctx, const RequestMeta& meta, const HttpResponse& response, double seconds) {
  const int status = response.status;
  ctx.metrics.add("glassbox_requests_total", {{"model", meta.model}, {"route", meta.route}, {"code", std::to_string(status)}});
  ctx.metrics.observe("glassbox_request_duration_seconds", {{"model", meta.model}, {"route", meta.route}}, seconds);
  if (response.refusal)
    if (const char* reason = refusal_info(response.refusal->code).metric_reason)
      ctx.metrics.add("glassbox_rejected_requests_total", {{"model", meta.model}, {"reason", reason}});
  if (ctx.options.access_log) log_access(meta, response, seconds);
}

void metrics_scrape(ServerContext& ctx, HttpRequest&&, const PathParams&, Responder respond) {
  auto depths = ctx.scheduler.queue_depths();
  ctx.metrics.clear("glassbox_queue_depth");
  ctx.metrics.clear("glassbox_model_ready");  // a replaced version's series must not stay at 1
  for (const auto& e : ctx.repository.index()) {
    ctx.metrics.set("glassbox_queue_depth", {{"model", e.name}}, static_cast<double>(depths[e.name]));
    ctx.metrics.set("glassbox_model_ready", {{"model", e.name}, {"version", e.version}}, e.state == "READY" ? 1 : 0);
  }
  ctx.metrics.set("glassbox_inflight_requests", {}, static_cast<double>(ctx.in_flight()));
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = ctx.metrics.exposition(process_metrics());
  respond(std::move(r));
}

}  // namespace glassbox::server
