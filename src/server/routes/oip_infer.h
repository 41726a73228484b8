// The Open Inference Protocol's infer path once a request is decoded, shared by the REST route
// (POST /v2/models/{m}/infer, oip_routes.cpp) and gRPC ModelInfer (server/grpc): the scheduling
// parameters (timeout, priority), the inputs checked against the model, the work submitted to the
// scheduler, the requested outputs selected. Each front end decodes its own wire form into an
// InferRequest (server/codec) and encodes the answer; everything between is this one path.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/codec/oip_codec.h"
#include "server/routes/router.h"

namespace glassbox::server {

// Called once with the outputs to send, in order (binary[i]: requested in the binary section)
// and the response parameters (tokens_dropped when truncation dropped tokens).
using InferAnswer = std::function<void(const LoadedModel& model, const InferRequest& req, std::vector<OipTensor> outputs,
                                       std::vector<bool> binary, const nlohmann::json& parameters, int64_t tokens_dropped)>;

// `origin` carries the request's meta (route, ids, deadline) and cancel flag. Every refusal
// (validation, queue full, deadline, drain, engine error) goes to `respond` as refuse(...); a
// result goes to `done`. Exactly one of them is called.
void submit_infer(ServerContext& ctx, const HttpRequest& origin, std::shared_ptr<const LoadedModel> model, InferRequest req,
                  const Responder& respond, InferAnswer done);

// The model a request names: 400 an invalid name, 404 unknown, 503 not serving (ModelLookup.status).
ModelLookup lookup_model(ServerContext& ctx, const std::string& name, const std::string& version);

// The protocol extensions GET /v2 and gRPC ServerMetadata report.
const std::vector<std::string>& oip_extensions();

}  // namespace glassbox::server
