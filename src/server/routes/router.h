// Routing: one function per protocol family, chosen by path. Handlers parse and validate,
// then submit work to the scheduler and answer from its completion: they never call a
// session or pipeline directly.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/codec/request_fields.h"
#include "server/http/http_types.h"
#include "server/metrics/metrics.h"
#include "server/repository/repository.h"
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

// --- shared by the protocol files ---
HttpResponse json_response(int status, const nlohmann::ordered_json& body);
HttpResponse json_response(int status, const nlohmann::json& body);
// Status for an error of the given code (400, 404, 413, 500).
int http_status(ErrorCode code);
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
// The reject callback of a work item: answers with the status.
std::function<void(int, const std::string&)> reject_with(const Responder& respond);
// "X-Glassbox-Tokens-Dropped" when a declared or requested truncation dropped tokens.
void add_truncation_header(HttpResponse& r, int64_t dropped);

// Protocol families (each in its own file).
void route_oip(ServerContext& ctx, HttpRequest&& req, const std::vector<std::string>& parts, Responder respond);
void route_repository(ServerContext& ctx, HttpRequest&& req, const std::vector<std::string>& parts, Responder respond);
void route_tei(ServerContext& ctx, HttpRequest&& req, const std::string& name, Responder respond);
void route_openai(ServerContext& ctx, HttpRequest&& req, Responder respond);
// POST /rerank (TEI's shape) or, with cohere, POST /v1/rerank (Cohere's and Jina's shape).
void route_rerank(ServerContext& ctx, HttpRequest&& req, bool cohere, Responder respond);

}  // namespace glassbox::server
