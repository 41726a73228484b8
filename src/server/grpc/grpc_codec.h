// The gRPC wire form of OIP inference (inference.proto) to and from the OIP codec's structs
// (server/codec/oip_codec.h), so everything after decoding is the REST route's path
// (server/routes/oip_infer.h). Inputs come typed (InferTensorContents, the field for their
// datatype) or all raw (raw_input_contents, the binary extension's layout); FP16 and BF16 only
// raw. Every count, shape and datatype is checked against the same OipLimits before allocation.
// Outputs always go out raw (raw_output_contents), as Triton sends them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "server/codec/oip_codec.h"
#include "server/grpc/inference.pb.h"

namespace glassbox::server {

Result<InferRequest> decode_grpc_infer_request(const inference::ModelInferRequest& msg, const OipLimits& limits);

void encode_grpc_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                const nlohmann::json& parameters, const std::vector<OipTensor>& outputs,
                                inference::ModelInferResponse* out);

// An InferParameter map as the JSON object REST requests carry (non-negative int64 as unsigned,
// as a JSON parser reads them), so "timeout", "priority", "truncate" read the same either way.
Result<nlohmann::json> grpc_parameters_json(const google::protobuf::Map<std::string, inference::InferParameter>& params,
                                            const std::string& where);

}  // namespace glassbox::server
