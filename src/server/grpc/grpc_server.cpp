#include "server/grpc/grpc_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <limits>

#include "glassbox/version.h"
#include "server/grpc/grpc_call.h"
#include "server/grpc/grpc_codec.h"
#include "server/grpc/inference.grpc.pb.h"
#include "server/routes/oip_infer.h"

namespace glassbox::server {

namespace pb = ::inference;
using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

const std::vector<GrpcMethod>& grpc_methods() {
  static const std::vector<GrpcMethod> m = {
      {"ServerLive", "liveness: live = true as soon as the port is open"},
      {"ServerReady", "readiness: true when a model serves and the server is not draining"},
      {"ModelReady", "model readiness (false while loading, unavailable or draining); NOT_FOUND unknown"},
      {"ServerMetadata", "server name, version and extensions"},
      {"ModelMetadata", "model metadata (variable dims = -1)"},
      {"ModelInfer", "inference: typed contents or raw_input_contents in, raw_output_contents out (FP16/BF16 raw only)"},
      {"RepositoryIndex", "Triton repository index: every model with state and reason"},
      {"RepositoryModelLoad", "load or reload a model from the repository"},
      {"RepositoryModelUnload", "unload a model"},
  };
  return m;
}

std::string grpc_method_path(const char* name) { return std::string("/inference.GRPCInferenceService/") + name; }

nlohmann::ordered_json grpc_methods_json() {
  auto out = nlohmann::ordered_json::array();
  for (const auto& m : grpc_methods()) out.push_back({{"method", m.name}, {"path", grpc_method_path(m.name)}, {"what", m.what}});
  return out;
}

std::string grpc_methods_markdown() {
  std::string s = "| method | what |\n|---|---|\n";
  for (const auto& m : grpc_methods()) s += std::string("| `") + m.name + "` | " + m.what + " |\n";
  return s;
}

namespace {

std::optional<Refusal> lookup_failure(const ModelLookup& look) {
  if (look.model) return std::nullopt;
  return lookup_refusal(look).refusal;
}

void fill_specs(const std::vector<OipSpec>& specs,
                google::protobuf::RepeatedPtrField<pb::ModelMetadataResponse::TensorMetadata>* out) {
  for (const auto& s : specs) {
    auto* t = out->Add();
    t->set_name(s.name);
    t->set_datatype(s.datatype);
    for (int64_t d : s.shape) t->add_shape(d);
  }
}

class InferenceService final : public pb::GRPCInferenceService::CallbackService {
 public:
  InferenceService(ServerContext& ctx, std::atomic<int64_t>& in_flight) : ctx_(ctx), in_flight_(in_flight) {}

  ServerUnaryReactor* ServerLive(CallbackServerContext* c, const pb::ServerLiveRequest*, pb::ServerLiveResponse* out) override {
    auto call = start(c, "ServerLive");
    out->set_live(true);
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* ServerReady(CallbackServerContext* c, const pb::ServerReadyRequest*, pb::ServerReadyResponse* out) override {
    auto call = start(c, "ServerReady");
    out->set_ready(!ctx_.draining.load() && ctx_.repository.ready());
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* ModelReady(CallbackServerContext* c, const pb::ModelReadyRequest* in, pb::ModelReadyResponse* out) override {
    auto call = start(c, "ModelReady");
    ModelLookup look = lookup_model(ctx_, in->name(), in->version());
    if (look.status == 404 || look.status == 400) return refused(call, *lookup_refusal(look).refusal);
    out->set_ready(look.model != nullptr && !ctx_.draining.load());
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* ServerMetadata(CallbackServerContext* c, const pb::ServerMetadataRequest*,
                                     pb::ServerMetadataResponse* out) override {
    auto call = start(c, "ServerMetadata");
    out->set_name("glassbox");
    out->set_version(glassbox::version());
    for (const auto& e : oip_extensions()) out->add_extensions(e);
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* ModelMetadata(CallbackServerContext* c, const pb::ModelMetadataRequest* in,
                                    pb::ModelMetadataResponse* out) override {
    auto call = start(c, "ModelMetadata");
    ModelLookup look = lookup_model(ctx_, in->name(), in->version());
    if (auto r = lookup_failure(look)) return refused(call, *r);
    const LoadedModel& m = *look.model;
    call->meta().model = m.name;
    out->set_name(m.name);
    out->add_versions(m.version);
    out->set_platform("onnx_onnxv1");
    fill_specs(m.inputs, out->mutable_inputs());
    fill_specs(m.outputs, out->mutable_outputs());
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* ModelInfer(CallbackServerContext* c, const pb::ModelInferRequest* in, pb::ModelInferResponse* out) override {
    auto call = start(c, "ModelInfer");
    if (ctx_.draining.load()) return refused(call, *draining_refusal().refusal);
    ModelLookup look = lookup_model(ctx_, in->model_name(), in->model_version());
    if (auto r = lookup_failure(look)) return refused(call, *r);
    auto req = decode_grpc_infer_request(*in, oip_limits(ctx_.options));
    if (!req.ok()) return refused(call, refusal_from_error(req.error(), nullptr));
    submit_infer(ctx_, call->origin(), std::move(look.model), std::move(req).value(), call->responder(),
                 [call, out](const LoadedModel& m, const InferRequest& r, std::vector<OipTensor> outs, std::vector<bool>,
                             const nlohmann::json& parameters, int64_t) {
                   encode_grpc_infer_response(m.name, m.version, r.id, parameters, outs, out);
                   call->ok();
                 });
    return call.get();
  }

  ServerUnaryReactor* RepositoryIndex(CallbackServerContext* c, const pb::RepositoryIndexRequest* in,
                                      pb::RepositoryIndexResponse* out) override {
    auto call = start(c, "RepositoryIndex");
    for (const auto& e : ctx_.repository.index()) {
      if (in->ready() && e.state != "READY") continue;
      auto* row = out->add_models();
      row->set_name(e.name);
      row->set_version(e.version);
      row->set_state(e.state);
      row->set_reason(e.reason);
    }
    call->ok();
    return call.get();
  }

  ServerUnaryReactor* RepositoryModelLoad(CallbackServerContext* c, const pb::RepositoryModelLoadRequest* in,
                                          pb::RepositoryModelLoadResponse*) override {
    return load_or_unload(start(c, "RepositoryModelLoad"), in->model_name(), true);
  }

  ServerUnaryReactor* RepositoryModelUnload(CallbackServerContext* c, const pb::RepositoryModelUnloadRequest* in,
                                            pb::RepositoryModelUnloadResponse*) override {
    return load_or_unload(start(c, "RepositoryModelUnload"), in->model_name(), false);
  }

 private:
  std::shared_ptr<GrpcCall> start(CallbackServerContext* c, const char* method) {
    return GrpcCall::start(ctx_, in_flight_, c, method);
  }

  static ServerUnaryReactor* refused(const std::shared_ptr<GrpcCall>& call, const Refusal& r) {
    call->refuse(r);
    return call.get();
  }

  // The repository answers with an HTTP-like status: the same codes as the REST routes.
  ServerUnaryReactor* load_or_unload(std::shared_ptr<GrpcCall> call, const std::string& name, bool load) {
    if (!valid_model_name(name)) return refused(call, Refusal(RefusalCode::kInvalidRequest, "invalid model name", "model"));
    if (ctx_.draining.load()) return refused(call, *draining_refusal().refusal);
    call->meta().model = name;
    auto done = [call](int status, std::string message) {
      if (status == 200) return call->ok();
      const RefusalCode code = status == 404   ? RefusalCode::kModelNotFound
                               : status == 400 ? RefusalCode::kInvalidRequest
                               : status == 503 ? RefusalCode::kModelUnavailable
                                               : RefusalCode::kInternal;
      call->refuse(Refusal(code, std::move(message)));
    };
    if (load) ctx_.repository.load(name, done);
    else ctx_.repository.unload(name, done);
    return call.get();
  }

  ServerContext& ctx_;
  std::atomic<int64_t>& in_flight_;
};

}  // namespace

struct GrpcServer::Impl {
  explicit Impl(ServerContext& c) : ctx(c), service(c, in_flight) {}
  ServerContext& ctx;
  std::atomic<int64_t> in_flight{0};
  InferenceService service;
  std::unique_ptr<grpc::Server> server;
  bool stopped = false;
};

GrpcServer::GrpcServer(ServerContext& ctx) : impl_(std::make_unique<Impl>(ctx)) {}

GrpcServer::~GrpcServer() { shutdown(0); }

Result<int> GrpcServer::listen(const std::string& host, int port) {
  const std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  if (port <= 0 || port > 65535)
    return make_error(ErrorCode::kInvalidArgument, "gRPC port " + std::to_string(port) + " is not a port number", "--grpc-port");
  grpc::ServerBuilder builder;
  // The HTTP body cap bounds a message too: gRPC itself answers RESOURCE_EXHAUSTED beyond it.
  const int64_t cap = std::min<int64_t>(impl_->ctx.options.max_body_bytes, std::numeric_limits<int>::max());
  builder.SetMaxReceiveMessageSize(static_cast<int>(cap));
  int bound = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&impl_->service);
  // A second server on the same port must fail, not share it silently (gRPC enables SO_REUSEPORT).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound == 0)
    return make_error(ErrorCode::kInvalidArgument, "cannot listen for gRPC on " + address, "--grpc-port",
                      "pick a free port, or 0 to serve no gRPC");
  return bound;
}

int64_t GrpcServer::in_flight() const { return impl_->in_flight.load(); }

void GrpcServer::shutdown(double grace_s) {
  if (!impl_->server || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, grace_s) * 1000)));
  impl_->server->Wait();
}

}  // namespace glassbox::server
