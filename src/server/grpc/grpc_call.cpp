#include "server/grpc/grpc_call.h"

#include <algorithm>

#include "server/codec/trace_context.h"
#include "server/grpc/grpc_server.h"
#include "server/metrics/server_metrics.h"
#include "server/routes/router.h"

namespace glassbox::server {

// The numbers of RefusalInfo::grpc_code are grpc::StatusCode's.
static_assert(grpc::StatusCode::CANCELLED == 1 && grpc::StatusCode::INVALID_ARGUMENT == 3 &&
              grpc::StatusCode::DEADLINE_EXCEEDED == 4 && grpc::StatusCode::NOT_FOUND == 5 &&
              grpc::StatusCode::RESOURCE_EXHAUSTED == 8 && grpc::StatusCode::UNIMPLEMENTED == 12 &&
              grpc::StatusCode::INTERNAL == 13 && grpc::StatusCode::UNAVAILABLE == 14);

namespace {

std::string metadata(const grpc::CallbackServerContext* call, const char* key) {
  const auto& md = call->client_metadata();
  auto it = md.find(key);
  return it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

}  // namespace

GrpcCall::GrpcCall(ServerContext& ctx, std::atomic<int64_t>& in_flight, grpc::CallbackServerContext* call, const char* method)
    : ctx_(ctx), in_flight_(in_flight), call_(call) {
  in_flight_.fetch_add(1);
  meta_->route = grpc_method_path(method);
  meta_->method = "GRPC";
  // Identity as on HTTP: x-request-id kept when valid, traceparent continued when valid.
  const std::string id = metadata(call, "x-request-id");
  meta_->request_id = valid_request_id(id) ? id : random_hex_id(32);
  meta_->span_id = random_hex_id(16);
  if (auto tp = parse_traceparent(metadata(call, "traceparent"))) {
    meta_->trace_id = tp->trace_id;
    meta_->parent_span_id = tp->parent_id;
    meta_->trace_flags = tp->flags;
  } else {
    meta_->trace_id = random_hex_id(32);
  }
  // The client's deadline is the request's deadline: work past it is dropped before compute.
  if (call->deadline() != std::chrono::system_clock::time_point::max()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(call->deadline() - std::chrono::system_clock::now());
    meta_->timeout_ms = std::max<int64_t>(0, left.count());
  }
}

std::shared_ptr<GrpcCall> GrpcCall::start(ServerContext& ctx, std::atomic<int64_t>& in_flight, grpc::CallbackServerContext* call,
                                          const char* method) {
  std::shared_ptr<GrpcCall> c(new GrpcCall(ctx, in_flight, call, method));
  c->self_ = c;
  return c;
}

void GrpcCall::OnDone() {
  auto last = std::move(self_);  // may destroy this call when no closure holds it any more
}

void GrpcCall::finish(const grpc::Status& status, const HttpResponse& as_http) {
  if (finished_.exchange(true)) return;
  record_request(ctx_, *meta_, as_http,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  call_->AddInitialMetadata("x-request-id", meta_->request_id);
  call_->AddInitialMetadata("traceparent", "00-" + meta_->trace_id + "-" + meta_->span_id + "-" + meta_->trace_flags);
  if (as_http.refusal && as_http.refusal->retry_after_s > 0)
    call_->AddTrailingMetadata("retry-after", std::to_string(as_http.refusal->retry_after_s));
  in_flight_.fetch_sub(1);
  Finish(status);
}

void GrpcCall::ok() {
  HttpResponse r;
  r.status = 200;
  finish(grpc::Status::OK, r);
}

void GrpcCall::refuse(const Refusal& r) {
  const auto code = static_cast<grpc::StatusCode>(refusal_info(r.code).grpc_code);
  finish(grpc::Status(code, r.message), server::refuse(r));
}

HttpRequest GrpcCall::origin() const {
  HttpRequest req;
  req.method = "GRPC";
  req.path = meta_->route;
  req.meta = meta_;
  req.cancelled = cancelled_;
  return req;
}

Responder GrpcCall::responder() {
  std::shared_ptr<GrpcCall> self = self_;
  return Responder([self](HttpResponse r) {
    if (r.refusal) return self->refuse(*r.refusal);
    // Not a refusal: the shared code answers successes through its own callback, so this is
    // an internal failure (e.g. a response dropped unsent).
    self->refuse(Refusal(RefusalCode::kInternal, r.body.empty() ? "internal error" : r.body));
  });
}

}  // namespace glassbox::server
