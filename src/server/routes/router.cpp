#include "server/routes/router.h"

#include <chrono>

#include "server/metrics/server_metrics.h"

namespace glassbox::server {

HttpResponse json_response(int status, const nlohmann::ordered_json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kLimitExceeded: return 413;
    case ErrorCode::kUnsupported: return 400;
    default: return 500;
  }
}

HttpResponse error_response(const Error& e, const LoadedModel* model) {
  return json_error(http_status(e.code), model ? client_message(e, *model) : e.to_string());
}

std::function<void(int, const std::string&)> reject_with(const Responder& respond) {
  return [respond](int status, const std::string& message) { respond(json_error(status, message)); };
}

void submit_work(ServerContext& ctx, WorkItem item, const Responder& respond) {
  if (ctx.draining.load()) {
    HttpResponse r = json_error(503, "server is shutting down: no new work is admitted");
    r.close = true;
    return respond(std::move(r));
  }
  if (!item.reject) item.reject = reject_with(respond);
  if (auto refusal = ctx.scheduler.submit(std::move(item))) {
    HttpResponse r = json_error(refusal->status, refusal->message);
    if (refusal->retry_after_s > 0) r.headers.emplace_back("Retry-After", std::to_string(refusal->retry_after_s));
    respond(std::move(r));
  }
}

void add_truncation_header(HttpResponse& r, int64_t dropped) {
  if (dropped > 0) r.headers.emplace_back("X-Glassbox-Tokens-Dropped", std::to_string(dropped));
}

std::chrono::steady_clock::time_point deadline_of(const ServerContext& ctx, const RequestMeta& meta) {
  const int64_t ms = meta.timeout_ms >= 0 ? meta.timeout_ms : ctx.options.default_timeout_ms;
  if (ms <= 0 && meta.timeout_ms < 0) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
}

namespace {

// X-Request-Timeout-Ms and X-Request-Priority (any route); OIP parameters override them.
Status read_request_headers(const HttpRequest& req) {
  if (auto t = req.header("x-request-timeout-ms")) {
    const std::string v(*t);
    if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos)
      return make_error(ErrorCode::kInvalidArgument, "X-Request-Timeout-Ms must be a non-negative integer", "headers");
    req.meta->timeout_ms = std::stoll(v);
  }
  if (auto p = req.header("x-request-priority")) {
    if (*p != "high" && *p != "normal")
      return make_error(ErrorCode::kInvalidArgument, "X-Request-Priority must be \"high\" or \"normal\"", "headers");
    req.meta->high_priority = *p == "high";
  }
  return {};
}

void dispatch(ServerContext& ctx, HttpRequest&& req, Responder respond) {
  const auto parts = split_path(req.path);
  if (parts.size() == 1 && parts[0] == "metrics") {
    if (req.method != "GET") return respond(json_error(405, "method " + req.method + " is not allowed on /metrics"));
    return respond(scrape_metrics(ctx));
  }
  if (!parts.empty() && parts[0] == "v2") {
    if (parts.size() >= 2 && parts[1] == "repository") return route_repository(ctx, std::move(req), parts, respond);
    return route_oip(ctx, std::move(req), parts, respond);
  }
  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "embeddings") return route_openai(ctx, std::move(req), respond);
  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "rerank") return route_rerank(ctx, std::move(req), true, respond);
  if (parts.size() == 1 && parts[0] == "rerank") return route_rerank(ctx, std::move(req), false, respond);
  if (parts.size() == 1) return route_tei(ctx, std::move(req), parts[0], respond);
  respond(json_error(404, "no route for " + req.method + " " + req.path.substr(0, 200)));
}

}  // namespace

void route(ServerContext& ctx, HttpRequest&& req, Responder respond) {
  const auto t0 = std::chrono::steady_clock::now();
  auto meta = req.meta;
  meta->route = route_template(req.method, req.path);
  Responder counted([&ctx, meta, t0, respond](HttpResponse r) {
    record_request(ctx, *meta, r.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    respond(std::move(r));
  });
  if (Status st = read_request_headers(req); !st.ok()) return counted(error_response(st.error(), nullptr));
  dispatch(ctx, std::move(req), std::move(counted));
}

}  // namespace glassbox::server
