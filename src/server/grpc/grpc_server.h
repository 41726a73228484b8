// The gRPC front end of `glassbox serve` (--grpc-port): KServe v2's GRPCInferenceService
// (inference.proto) in the same process as HTTP, over the same ServerContext: the same models,
// scheduler, limits (a message is capped by max_body_bytes: RESOURCE_EXHAUSTED beyond), metrics
// (route = the method's path, code = the HTTP status of the same outcome) and drain (new calls
// UNAVAILABLE, readiness false; in-flight calls finish). Refusals are the typed Refusal, whose
// gRPC status code is its row in http_types.cpp. No gRPC header leaks out of this folder.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::server {

struct ServerContext;

// Every method served, declared once: its full path is /inference.GRPCInferenceService/NAME (the
// `route` label of the request metrics). `glassbox explain --serve` and docs/serving.md list them.
struct GrpcMethod {
  const char* name;
  const char* what;
};
const std::vector<GrpcMethod>& grpc_methods();
std::string grpc_method_path(const char* name);
nlohmann::ordered_json grpc_methods_json();
std::string grpc_methods_markdown();

class GrpcServer {
 public:
  explicit GrpcServer(ServerContext& ctx);  // ctx must outlive the server
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Starts serving on host:port (the port must be > 0; the bound port is returned).
  Result<int> listen(const std::string& host, int port);
  // Calls accepted and not yet answered.
  int64_t in_flight() const;
  // Stops accepting; calls still open after `grace_s` are cancelled. Idempotent.
  void shutdown(double grace_s);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox::server
