#include "server/grpc/grpc_codec.h"

#include <limits>
#include <type_traits>

namespace glassbox::server {
namespace {

using nlohmann::json;
namespace pb = ::inference;

Error bad(const std::string& what, const std::string& where, const std::string& fix = {}) {
  return make_error(ErrorCode::kInvalidArgument, what, where, fix);
}

// Elements in every typed field: only the datatype's own field may hold any.
int64_t typed_count(const pb::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
         c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size();
}

// Copies a repeated field into t.tensor (allocated for its datatype), range-checking narrowing.
template <class T, class Field>
Status copy_typed(OipTensor& t, const Field& field, const std::string& where) {
  T* out = t.tensor.mutable_data<T>();
  for (int i = 0; i < field.size(); ++i) {
    const auto v = field.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < sizeof(v)) {
      const int64_t w = static_cast<int64_t>(v);  // int32/uint32 into INT8/16, UINT8/16: all fit in int64
      if (w < static_cast<int64_t>(std::numeric_limits<T>::min()) || w > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return bad("element " + std::to_string(i) + " (" + std::to_string(w) + ") is out of range for " + t.datatype, where);
    }
    out[i] = static_cast<T>(v);
  }
  return {};
}

// Fills t from the typed field of its datatype (FP16/BF16 have none: raw only).
Status fill_typed(OipTensor& t, DataType dtype, const pb::InferTensorContents& c, int64_t numel, const std::string& where) {
  if (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16)
    return bad(t.datatype + " data can only be sent in raw_input_contents", where,
               "send every input's bytes in raw_input_contents (FP16/BF16 have no typed field)");
  int64_t have = 0;
  const char* field = "";
  switch (dtype) {
    case DataType::kBool: have = c.bool_contents_size(); field = "bool_contents"; break;
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: have = c.int_contents_size(); field = "int_contents"; break;
    case DataType::kInt64: have = c.int64_contents_size(); field = "int64_contents"; break;
    case DataType::kUInt8: case DataType::kUInt16: case DataType::kUInt32: have = c.uint_contents_size(); field = "uint_contents"; break;
    case DataType::kUInt64: have = c.uint64_contents_size(); field = "uint64_contents"; break;
    case DataType::kFloat32: have = c.fp32_contents_size(); field = "fp32_contents"; break;
    case DataType::kFloat64: have = c.fp64_contents_size(); field = "fp64_contents"; break;
    case DataType::kString: have = c.bytes_contents_size(); field = "bytes_contents"; break;
    default: return bad("datatype " + t.datatype + " is not supported", where);
  }
  if (have != typed_count(c))
    return bad("contents holds data outside " + std::string(field), where, "a " + t.datatype + " tensor's data goes in " + field);
  if (have != numel)
    return bad(std::string(field) + " has " + std::to_string(have) + " elements but shape " + shape_to_string(t.shape) +
                   " needs " + std::to_string(numel),
               where, "send shape x datatype matching the data");
  if (dtype == DataType::kString) {
    t.bytes.assign(c.bytes_contents().begin(), c.bytes_contents().end());
    return {};
  }
  GB_ASSIGN_OR_RETURN(t.tensor, Tensor::allocate(dtype, t.shape));
  switch (dtype) {
    case DataType::kBool: return copy_typed<bool>(t, c.bool_contents(), where);
    case DataType::kInt8: return copy_typed<int8_t>(t, c.int_contents(), where);
    case DataType::kInt16: return copy_typed<int16_t>(t, c.int_contents(), where);
    case DataType::kInt32: return copy_typed<int32_t>(t, c.int_contents(), where);
    case DataType::kInt64: return copy_typed<int64_t>(t, c.int64_contents(), where);
    case DataType::kUInt8: return copy_typed<uint8_t>(t, c.uint_contents(), where);
    case DataType::kUInt16: return copy_typed<uint16_t>(t, c.uint_contents(), where);
    case DataType::kUInt32: return copy_typed<uint32_t>(t, c.uint_contents(), where);
    case DataType::kUInt64: return copy_typed<uint64_t>(t, c.uint64_contents(), where);
    case DataType::kFloat32: return copy_typed<float>(t, c.fp32_contents(), where);
    default: return copy_typed<double>(t, c.fp64_contents(), where);
  }
}

Result<OipTensor> decode_input(const pb::ModelInferRequest& msg, int index, const OipLimits& limits) {
  const pb::ModelInferRequest::InferInputTensor& in = msg.inputs(index);
  const std::string where = "inputs[" + std::to_string(index) + "] '" + in.name() + "'";
  OipTensor t;
  t.name = in.name();
  t.datatype = in.datatype();
  const auto dtype = oip_datatype(t.datatype);
  if (!dtype)
    return bad("unknown datatype \"" + t.datatype + "\"", where, "use BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64 or BYTES");
  for (int64_t d : in.shape()) {
    if (d < 0) return bad("shape has a negative dimension", where);
    t.shape.push_back(d);
  }
  GB_ASSIGN_OR_RETURN(const int64_t numel, checked_numel(t.shape, limits, where));
  GB_ASSIGN_OR_RETURN(t.parameters, grpc_parameters_json(in.parameters(), where));
  if (msg.raw_input_contents_size() == 0) {
    GB_RETURN_IF_ERROR(fill_typed(t, *dtype, in.contents(), numel, where));
    return t;
  }
  if (typed_count(in.contents()) > 0) return bad("has typed contents while the request uses raw_input_contents", where);
  GB_RETURN_IF_ERROR(fill_tensor_from_binary(t, *dtype, msg.raw_input_contents(index), numel, where));
  return t;
}

}  // namespace

Result<json> grpc_parameters_json(const google::protobuf::Map<std::string, pb::InferParameter>& params, const std::string& where) {
  json out = json::object();
  for (const auto& [key, p] : params) {
    switch (p.parameter_choice_case()) {
      case pb::InferParameter::kBoolParam: out[key] = p.bool_param(); break;
      case pb::InferParameter::kInt64Param:
        if (p.int64_param() >= 0) out[key] = static_cast<uint64_t>(p.int64_param());
        else out[key] = p.int64_param();
        break;
      case pb::InferParameter::kStringParam: out[key] = p.string_param(); break;
      case pb::InferParameter::kDoubleParam: out[key] = p.double_param(); break;
      case pb::InferParameter::kUint64Param: out[key] = p.uint64_param(); break;
      default: return bad("parameter '" + key + "' has no value", where + " parameters");
    }
  }
  return out;
}

Result<InferRequest> decode_grpc_infer_request(const pb::ModelInferRequest& msg, const OipLimits& limits) {
  InferRequest r;
  r.id = msg.id();
  GB_ASSIGN_OR_RETURN(r.parameters, grpc_parameters_json(msg.parameters(), "parameters"));
  if (msg.inputs_size() > limits.max_tensors)
    return bad(std::to_string(msg.inputs_size()) + " inputs, over the server's max_inputs_per_request (" +
                   std::to_string(limits.max_tensors) + ")", "inputs");
  if (msg.raw_input_contents_size() > 0 && msg.raw_input_contents_size() != msg.inputs_size())
    return bad("raw_input_contents has " + std::to_string(msg.raw_input_contents_size()) + " entries for " +
                   std::to_string(msg.inputs_size()) + " inputs", "inputs",
               "send one raw_input_contents entry per input, in the order of inputs");
  for (int i = 0; i < msg.inputs_size(); ++i) {
    GB_ASSIGN_OR_RETURN(OipTensor t, decode_input(msg, i, limits));
    for (const auto& prev : r.inputs)
      if (prev.name == t.name) return bad("input '" + t.name + "' is given twice", "inputs");
    r.inputs.push_back(std::move(t));
  }
  if (msg.outputs_size() > limits.max_tensors) return bad("too many requested outputs", "outputs");
  for (const auto& o : msg.outputs()) r.outputs.push_back({o.name(), true});
  r.binary_output_default = true;
  return r;
}

namespace {

void set_parameter(pb::InferParameter& p, const json& v) {
  if (v.is_boolean()) p.set_bool_param(v.get<bool>());
  else if (v.is_number_unsigned()) p.set_uint64_param(v.get<uint64_t>());
  else if (v.is_number_integer()) p.set_int64_param(v.get<int64_t>());
  else if (v.is_number_float()) p.set_double_param(v.get<double>());
  else if (v.is_string()) p.set_string_param(v.get<std::string>());
  else p.set_string_param(v.dump(-1, ' ', false, json::error_handler_t::replace));  // objects: their JSON text
}

}  // namespace

void encode_grpc_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                const json& parameters, const std::vector<OipTensor>& outputs, pb::ModelInferResponse* out) {
  out->set_model_name(model);
  out->set_model_version(version);
  out->set_id(id);
  for (const auto& [key, value] : parameters.items()) set_parameter((*out->mutable_parameters())[key], value);
  for (const OipTensor& t : outputs) {
    auto* o = out->add_outputs();
    o->set_name(t.name);
    o->set_datatype(t.datatype);
    for (int64_t d : t.shape) o->add_shape(d);
    std::string raw;
    append_tensor_binary(t, raw);
    out->add_raw_output_contents(std::move(raw));
  }
}

}  // namespace glassbox::server
