// Open Inference Protocol (KServe v2) infer requests and responses: JSON tensors (flat or
// nested data), the binary tensor extension (Inference-Header-Content-Length,
// binary_data_size on inputs, binary_data on requested outputs), BYTES as strings (JSON)
// or 4-byte little-endian length + bytes (binary). Every count, shape and datatype is
// checked before a tensor is allocated.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/tensor.h"
#include "server/http/http_types.h"
#include "server/server_options.h"

namespace glassbox::server {

// "FP32" <-> DataType::kFloat32; BYTES <-> kString. nullopt / "" for no OIP name.
std::optional<DataType> oip_datatype(std::string_view name);
const char* oip_datatype_name(DataType t);

struct OipTensor {
  std::string name;
  std::string datatype;             // as sent / to send ("FP32", "BYTES", ...)
  Shape shape;
  Tensor tensor;                    // numeric and BOOL data
  std::vector<std::string> bytes;   // BYTES data, row-major
  nlohmann::json parameters = nlohmann::json::object();
};

struct RequestedOutput {
  std::string name;
  bool binary = false;
};

struct InferRequest {
  std::string id;                   // echoed in the response ("" = none sent)
  nlohmann::json parameters = nlohmann::json::object();
  std::vector<OipTensor> inputs;
  std::vector<RequestedOutput> outputs;  // empty = every output
  bool binary_output_default = false;    // parameters.binary_data_output
};

// What parse_infer_request accepts. The server's come from ServerOptions (oip_limits); no
// defaults here, so no second copy of a limit.
struct OipLimits {
  int max_json_depth;
  int max_tensors;
  int64_t max_elements;  // per tensor, checked before allocation
};
OipLimits oip_limits(const ServerOptions& options);

// --- shared by the REST and gRPC decoders (server/grpc/grpc_codec.h) ---
// The element count of a declared shape, refused when it overflows or passes limits.max_elements.
Result<int64_t> checked_numel(const Shape& shape, const OipLimits& limits, const std::string& where);
// Fills t (t.shape set) from raw row-major little-endian bytes: exactly numel x the datatype's size,
// or for BYTES numel elements of 4-byte little-endian length + bytes.
Status fill_tensor_from_binary(OipTensor& t, DataType dtype, std::string_view bytes, int64_t numel, const std::string& where);
// Appends t's data in that same raw layout.
void append_tensor_binary(const OipTensor& t, std::string& out);

// Parses the body of POST .../infer (JSON, or JSON header + binary section).
Result<InferRequest> parse_infer_request(const HttpRequest& req, const OipLimits& limits);

// The response: JSON, or JSON header + binary section when any output is binary.
// Outputs are written in the given order; `binary` marks those sent in the binary section.
Result<HttpResponse> encode_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                           const nlohmann::json& parameters, const std::vector<OipTensor>& outputs,
                                           const std::vector<bool>& binary);

}  // namespace glassbox::server
