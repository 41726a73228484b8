// libFuzzer target for the gRPC front end's message handling without sockets or models:
// arbitrary bytes are parsed as a ModelInferRequest (inference.proto, the protobuf runtime the
// server links) and decoded by the server's gRPC codec with small limits (typed contents, raw
// contents, parameters, every count and range check). A request that decodes is encoded back as
// a ModelInferResponse, its raw_output_contents sent again as raw_input_contents through the wire
// form: every tensor must come back byte for byte. Run:
//   build-fuzz/tests/fuzz/fuzz_grpc_message -max_total_time=300 CORPUS
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/grpc/grpc_codec.h"

using namespace glassbox::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void round_trip(const InferRequest& in, const OipLimits& limits) {
  inference::ModelInferResponse resp;
  encode_grpc_infer_response("m", "1", in.id, in.parameters, in.inputs, &resp);
  check(resp.outputs_size() == static_cast<int>(in.inputs.size()) && resp.raw_output_contents_size() == resp.outputs_size());
  inference::ModelInferRequest again;
  again.set_id(resp.id());
  for (const auto& [key, value] : resp.parameters()) {
    (*again.mutable_parameters())[key].CopyFrom(value);
  }
  for (int i = 0; i < resp.outputs_size(); ++i) {
    const auto& o = resp.outputs(i);
    auto* t = again.add_inputs();
    t->set_name(o.name());
    t->set_datatype(o.datatype());
    for (int64_t d : o.shape()) t->add_shape(d);
    again.add_raw_input_contents(resp.raw_output_contents(i));
  }
  std::string wire;
  check(again.SerializeToString(&wire));
  inference::ModelInferRequest parsed;
  check(parsed.ParseFromString(wire));
  auto back = decode_grpc_infer_request(parsed, limits);
  check(back.ok());
  // dump(): a NaN double parameter is unequal to itself but prints the same.
  check(back->id == in.id && back->parameters.dump() == in.parameters.dump() && back->inputs.size() == in.inputs.size());
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    const OipTensor &x = in.inputs[i], &y = back->inputs[i];
    check(x.name == y.name && x.datatype == y.datatype && x.shape == y.shape && x.bytes == y.bytes);
    check(x.tensor.nbytes() == y.tensor.nbytes());
    if (x.tensor.nbytes()) check(std::memcmp(x.tensor.raw(), y.tensor.raw(), x.tensor.nbytes()) == 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inference::ModelInferRequest msg;
  if (!msg.ParseFromArray(data, static_cast<int>(size))) return 0;
  const OipLimits limits{16, 8, 1 << 16};  // max_json_depth (unused here), tensors, elements per tensor
  auto req = decode_grpc_infer_request(msg, limits);
  if (!req.ok()) {
    check(!req.error().to_string().empty());
    return 0;
  }
  round_trip(*req, limits);
  return 0;
}
