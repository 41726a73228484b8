// One gRPC call from arrival to its status (internal to server/grpc): counted in flight, in
// glassbox_requests_total / _duration_seconds (route = the method's path) and the access log
// like an HTTP request, answered exactly once. Owned by shared pointers: gRPC's reference (held
// until OnDone) and the closures of work still pending, so a late callback never touches a
// finished call. Refusals come as the typed Refusal; its gRPC status is refusal_info().grpc_code.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "server/http/http_types.h"

namespace glassbox::server {

struct ServerContext;

class GrpcCall final : public grpc::ServerUnaryReactor {
 public:
  // `method`: a grpc_methods() name. `in_flight` is the server's counter (decremented at finish).
  static std::shared_ptr<GrpcCall> start(ServerContext& ctx, std::atomic<int64_t>& in_flight,
                                         grpc::CallbackServerContext* call, const char* method);

  void OnCancel() override { cancelled_->store(true); }
  void OnDone() override;

  void ok();
  void refuse(const Refusal& r);
  // A request shell for the shared route code: this call's meta and cancel flag, no body.
  HttpRequest origin() const;
  // Refusals the shared route code answers (refuse(...) responses) end this call.
  Responder responder();
  RequestMeta& meta() { return *meta_; }
  grpc::CallbackServerContext* context() { return call_; }

 private:
  GrpcCall(ServerContext& ctx, std::atomic<int64_t>& in_flight, grpc::CallbackServerContext* call, const char* method);
  void finish(const grpc::Status& status, const HttpResponse& as_http);

  ServerContext& ctx_;
  std::atomic<int64_t>& in_flight_;
  grpc::CallbackServerContext* call_;
  std::shared_ptr<RequestMeta> meta_ = std::make_shared<RequestMeta>();
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::atomic<bool> finished_{false};
  std::shared_ptr<GrpcCall> self_;  // gRPC's reference, released in OnDone
};

}  // namespace glassbox::server
