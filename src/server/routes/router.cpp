#include "server/routes/router.h"

#include <chrono>

#include "server/codec/trace_context.h"
#include "server/metrics/server_metrics.h"
#include "server/routes/generation_routes.h"

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

HttpResponse error_response(const Error& e, const LoadedModel* model) { return refuse(refusal_from_error(e, model)); }

std::function<void(Refusal)> reject_with(const Responder& respond) {
  return [respond](Refusal r) { respond(refuse(std::move(r))); };
}

HttpResponse draining_refusal() {
  return refuse(Refusal{RefusalCode::kDraining, "server is shutting down: no new work is admitted", {}, 0, true});
}

void submit_work(ServerContext& ctx, WorkItem item, const Responder& respond) {
  if (ctx.draining.load()) return respond(draining_refusal());
  if (!item.reject) item.reject = reject_with(respond);
  if (auto refusal = ctx.scheduler.submit(std::move(item))) respond(refuse(std::move(*refusal)));
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

// X-Request-Id (kept when valid, else generated) and W3C traceparent (its trace continues with a
// span of this server; invalid or absent: a new trace).
void read_trace_context(const HttpRequest& req, RequestMeta& meta) {
  auto id = req.header("x-request-id");
  meta.request_id = id && valid_request_id(*id) ? std::string(*id) : random_hex_id(32);
  meta.span_id = random_hex_id(16);
  if (auto tp = req.header("traceparent")) {
    if (auto t = parse_traceparent(*tp)) {
      meta.trace_id = t->trace_id;
      meta.parent_span_id = t->parent_id;
      meta.trace_flags = t->flags;
      return;
    }
  }
  meta.trace_id = random_hex_id(32);
}

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

}  // namespace

void route(ServerContext& ctx, HttpRequest&& req, Responder respond) {
  const auto t0 = std::chrono::steady_clock::now();
  RouteMatch match = match_route(req.method, req.path);
  auto meta = req.meta;
  meta->route = match.route ? match.route->path : "other";
  meta->method = req.method.substr(0, 16);
  meta->bytes_in = static_cast<int64_t>(req.body.size());
  read_trace_context(req, *meta);
  const Protocol protocol = match.route ? match.route->protocol : protocol_for_path(req.path);
  Responder counted([&ctx, meta, t0, protocol, respond](HttpResponse r) {
    render_refusal(r, protocol);
    r.headers.emplace_back("X-Request-Id", meta->request_id);
    r.headers.emplace_back("traceparent", "00-" + meta->trace_id + "-" + meta->span_id + "-" + meta->trace_flags);
    record_request(ctx, *meta, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    respond(std::move(r));
  });
  if (!match.route)
    return counted(refuse(RefusalCode::kRouteNotFound, "no route for " + req.method + " " + req.path.substr(0, 200),
                          {}));
  if (match.wrong_method)
    return counted(refuse(RefusalCode::kMethodNotAllowed,
                          "method " + req.method.substr(0, 20) + " is not allowed on " + match.route->path + " (allowed: " +
                              match.allowed + ")"));
  if (Status st = read_request_headers(req); !st.ok()) return counted(error_response(st.error(), nullptr));
  match.route->handler(ctx, std::move(req), match.params, std::move(counted));
}

void render_for_target(std::string_view target, HttpResponse& r) {
  const std::string path(target.substr(0, target.find('?')));
  render_refusal(r, protocol_for_path(path));
}

}  // namespace glassbox::server
