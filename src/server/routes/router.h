// Routing: the route table (route_table.h) picks the handler by method and path. Handlers parse
// and validate, then submit work to the scheduler and answer from its completion: they never
// call a session or pipeline directly. A refusal is refuse(code, message, param); the route's
// protocol renders it (refusal.h).
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/codec/request_fields.h"
#include "server/http/http_types.h"
#include "server/metrics/metrics.h"
#include "server/repository/repository.h"
#include "server/routes/refusal.h"
#include "server/routes/route_table.h"
#include "server/scheduler/scheduler.h"
#include "server/server_options.h"

namespace glassbox::server {

struct ServerContext {
  const ServerOptions& options;
  ModelRepository& repository;
  Scheduler& scheduler;
  std::atomic<bool>& draining;
  nlohmann::ordered_json server_explain;  // the server's options, as `explain --serve` prints them
  Metrics& metrics;
  std::function<int64_t()> in_flight;
};

void route(ServerContext& ctx, HttpRequest&& req, Responder respond);
// Renders a refusal the HTTP layer made before routing (413, 431, a bad path) in the shape of
// the protocol its target belongs to.
void render_for_target(std::string_view target, HttpResponse& r);

// --- shared by the protocol files ---
HttpResponse json_response(int status, const nlohmann::ordered_json& body);
HttpResponse json_response(int status, const nlohmann::json& body);
// refuse(refusal_from_error(e, model)): an error as the client may see it, in the route's shape.
HttpResponse error_response(const Error& e, const LoadedModel* model);
// The request's deadline: its own timeout (meta.timeout_ms) or the server's default; none = max.
std::chrono::steady_clock::time_point deadline_of(const ServerContext& ctx, const RequestMeta& meta);

// A work item for `req`'s model: its cancel flag, meta, deadline and priority.
template <class Job>
WorkItem make_work(const ServerContext& ctx, std::shared_ptr<const LoadedModel> model, Job job, const HttpRequest& req) {
  WorkItem w;
  req.meta->model = model->name;
  req.meta->version = model->version;
  w.model = std::move(model);
  w.job = std::move(job);
  w.cancelled = req.cancelled;
  w.meta = req.meta;
  w.deadline = deadline_of(ctx, *req.meta);
  w.high_priority = req.meta->high_priority;
  return w;
}
// Submits the item; a refusal (queue full, draining) is answered at once.
void submit_work(ServerContext& ctx, WorkItem item, const Responder& respond);
// The reject callback of a work item: answers with the refusal.
std::function<void(Refusal)> reject_with(const Responder& respond);
// 503 + Connection: close while the server drains.
HttpResponse draining_refusal();
// "X-Glassbox-Tokens-Dropped" when a declared or requested truncation dropped tokens.
void add_truncation_header(HttpResponse& r, int64_t dropped);

// Handlers of the route table (route_table.cpp), by protocol file.
#define GB_ROUTE_HANDLER(name) void name(ServerContext& ctx, HttpRequest&& req, const PathParams& params, Responder respond)
// oip_routes.cpp
GB_ROUTE_HANDLER(oip_server_metadata);
GB_ROUTE_HANDLER(oip_health_live);
GB_ROUTE_HANDLER(oip_health_ready);
GB_ROUTE_HANDLER(oip_model_metadata);
GB_ROUTE_HANDLER(oip_model_ready);
GB_ROUTE_HANDLER(oip_model_infer);
GB_ROUTE_HANDLER(oip_model_explain);
// repository_routes.cpp
GB_ROUTE_HANDLER(repository_index);
GB_ROUTE_HANDLER(repository_load);
GB_ROUTE_HANDLER(repository_unload);
// tei_routes.cpp
GB_ROUTE_HANDLER(tei_embed);
GB_ROUTE_HANDLER(tei_predict);
GB_ROUTE_HANDLER(tei_tokenize);
GB_ROUTE_HANDLER(tei_decode);
GB_ROUTE_HANDLER(tei_info);
GB_ROUTE_HANDLER(tei_health);
// openai_routes.cpp
GB_ROUTE_HANDLER(openai_embeddings);
// generation_routes.cpp
GB_ROUTE_HANDLER(openai_chat_completions);
GB_ROUTE_HANDLER(openai_completions);
GB_ROUTE_HANDLER(openai_models);
GB_ROUTE_HANDLER(tgi_generate);
GB_ROUTE_HANDLER(tgi_generate_stream);
// rerank_routes.cpp
GB_ROUTE_HANDLER(tei_rerank);
GB_ROUTE_HANDLER(cohere_rerank);
// sparse_routes.cpp
GB_ROUTE_HANDLER(tei_embed_sparse);
// retrieval_routes.cpp
GB_ROUTE_HANDLER(tei_similarity);
GB_ROUTE_HANDLER(tei_embed_all);
// server_metrics.cpp
GB_ROUTE_HANDLER(metrics_scrape);

}  // namespace glassbox::server
