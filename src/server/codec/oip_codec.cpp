#include "server/codec/oip_codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "glassbox/numerics.h"
#include "server/codec/json_body.h"

namespace glassbox::server {
namespace {

using nlohmann::json;

struct NameType {
  const char* name;
  DataType type;
};
constexpr NameType kTypes[] = {
    {"BOOL", DataType::kBool},     {"UINT8", DataType::kUInt8},   {"UINT16", DataType::kUInt16},
    {"UINT32", DataType::kUInt32}, {"UINT64", DataType::kUInt64}, {"INT8", DataType::kInt8},
    {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},   {"INT64", DataType::kInt64},
    {"FP16", DataType::kFloat16},  {"BF16", DataType::kBFloat16}, {"FP32", DataType::kFloat32},
    {"FP64", DataType::kFloat64},  {"BYTES", DataType::kString},
};

Error bad(const std::string& what, const std::string& where, const std::string& fix = {}) {
  return make_error(ErrorCode::kInvalidArgument, what, where, fix);
}

// Row-major leaves of nested `data` into out; depth is bounded by the parse's cap.
Status flatten(const json& data, std::vector<const json*>& out, int64_t max_elements, const std::string& where) {
  if (!data.is_array()) {
    out.push_back(&data);
  } else {
    for (const auto& v : data) {
      GB_RETURN_IF_ERROR(flatten(v, out, max_elements, where));
    }
  }
  if (static_cast<int64_t>(out.size()) > max_elements) return bad("data has more elements than the server accepts", where);
  return {};
}

template <class T>
Status fill_integers(const std::vector<const json*>& leaves, T* out, const std::string& where) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return bad("element " + std::to_string(i) + " (" + v.dump() + ") is out of range for the datatype", where);
      out[i] = static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const int64_t s = v.get<int64_t>();
      if (s < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (s > 0 && static_cast<uint64_t>(s) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        return bad("element " + std::to_string(i) + " (" + v.dump() + ") is out of range for the datatype", where);
      out[i] = static_cast<T>(s);
    } else {
      return bad("element " + std::to_string(i) + " is " + std::string(v.type_name()) + ", not an integer", where);
    }
  }
  return {};
}

template <class T>
Status fill_floats(const std::vector<const json*>& leaves, T* out, const std::string& where) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i]->is_number()) return bad("element " + std::to_string(i) + " is " + leaves[i]->type_name() + ", not a number", where);
    out[i] = static_cast<T>(leaves[i]->get<double>());
  }
  return {};
}

Status fill_from_json(OipTensor& t, DataType dtype, const json& data, const OipLimits& limits, int64_t numel,
                      const std::string& where) {
  std::vector<const json*> leaves;
  GB_RETURN_IF_ERROR(flatten(data, leaves, limits.max_elements, where));
  if (static_cast<int64_t>(leaves.size()) != numel)
    return bad("data has " + std::to_string(leaves.size()) + " elements but shape " + shape_to_string(t.shape) + " needs " +
                   std::to_string(numel),
               where, "send shape x datatype matching the data");
  if (dtype == DataType::kString) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!leaves[i]->is_string()) return bad("BYTES element " + std::to_string(i) + " is not a string", where);
      t.bytes.push_back(leaves[i]->get<std::string>());
    }
    return {};
  }
  if (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16)
    return bad(t.datatype + " data can only be sent in binary form", where,
               "use the binary tensor extension (parameters.binary_data_size)");
  GB_ASSIGN_OR_RETURN(t.tensor, Tensor::allocate(dtype, t.shape));
  switch (dtype) {
    case DataType::kBool: {
      auto* out = t.tensor.mutable_data<bool>();
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_boolean()) return bad("BOOL element " + std::to_string(i) + " is not true/false", where);
        out[i] = leaves[i]->get<bool>();
      }
      return {};
    }
    case DataType::kUInt8: return fill_integers(leaves, t.tensor.mutable_data<uint8_t>(), where);
    case DataType::kUInt16: return fill_integers(leaves, t.tensor.mutable_data<uint16_t>(), where);
    case DataType::kUInt32: return fill_integers(leaves, t.tensor.mutable_data<uint32_t>(), where);
    case DataType::kUInt64: return fill_integers(leaves, t.tensor.mutable_data<uint64_t>(), where);
    case DataType::kInt8: return fill_integers(leaves, t.tensor.mutable_data<int8_t>(), where);
    case DataType::kInt16: return fill_integers(leaves, t.tensor.mutable_data<int16_t>(), where);
    case DataType::kInt32: return fill_integers(leaves, t.tensor.mutable_data<int32_t>(), where);
    case DataType::kInt64: return fill_integers(leaves, t.tensor.mutable_data<int64_t>(), where);
    case DataType::kFloat32: return fill_floats(leaves, t.tensor.mutable_data<float>(), where);
    case DataType::kFloat64: return fill_floats(leaves, t.tensor.mutable_data<double>(), where);
    default: return bad("datatype " + t.datatype + " is not supported", where);
  }
}

Result<OipTensor> parse_input(const json& in, size_t index, const OipLimits& limits, std::string_view binary, size_t& offset) {
  std::string where = "inputs[" + std::to_string(index) + "]";
  if (!in.is_object()) return bad("is not an object", where);
  OipTensor t;
  if (!in.contains("name") || !in["name"].is_string()) return bad("has no string \"name\"", where);
  t.name = in["name"].get<std::string>();
  where += " '" + t.name + "'";
  if (!in.contains("datatype") || !in["datatype"].is_string()) return bad("has no string \"datatype\"", where);
  t.datatype = in["datatype"].get<std::string>();
  auto dtype = oip_datatype(t.datatype);
  if (!dtype) return bad("unknown datatype \"" + t.datatype + "\"", where, "use BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64 or BYTES");
  if (!in.contains("shape") || !in["shape"].is_array()) return bad("has no \"shape\" array", where);
  for (const auto& d : in["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) return bad("shape has a dimension that is not a non-negative integer", where);
    t.shape.push_back(d.get<int64_t>());
  }
  GB_ASSIGN_OR_RETURN(const int64_t numel, checked_numel(t.shape, limits, where));
  if (in.contains("parameters")) {
    if (!in["parameters"].is_object()) return bad("\"parameters\" is not an object", where);
    t.parameters = in["parameters"];
  }
  auto size_it = t.parameters.find("binary_data_size");
  if (size_it != t.parameters.end()) {
    if (!size_it->is_number_unsigned()) return bad("binary_data_size is not a non-negative integer", where);
    const uint64_t size = size_it->get<uint64_t>();
    if (in.contains("data")) return bad("has both \"data\" and binary_data_size", where);
    if (size > binary.size() - offset)
      return bad("binary_data_size " + std::to_string(size) + " runs past the end of the body", where);
    GB_RETURN_IF_ERROR(fill_tensor_from_binary(t, *dtype, binary.substr(offset, size), numel, where));
    offset += size;
    return t;
  }
  if (!in.contains("data")) return bad("has no \"data\" (and no binary_data_size)", where);
  GB_RETURN_IF_ERROR(fill_from_json(t, *dtype, in["data"], limits, numel, where));
  return t;
}

Status parse_outputs(const json& outs, InferRequest& r, const OipLimits& limits) {
  if (!outs.is_array()) return bad("\"outputs\" is not an array", "body");
  if (static_cast<int>(outs.size()) > limits.max_tensors) return bad("too many requested outputs", "body");
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string where = "outputs[" + std::to_string(i) + "]";
    if (!outs[i].is_object() || !outs[i].contains("name") || !outs[i]["name"].is_string())
      return bad("is not an object with a string \"name\"", where);
    RequestedOutput o{outs[i]["name"].get<std::string>(), r.binary_output_default};
    if (outs[i].contains("parameters")) {
      const json& p = outs[i]["parameters"];
      if (!p.is_object()) return bad("\"parameters\" is not an object", where);
      if (p.contains("binary_data")) {
        if (!p["binary_data"].is_boolean()) return bad("binary_data is not true/false", where);
        o.binary = p["binary_data"].get<bool>();
      }
    }
    r.outputs.push_back(std::move(o));
  }
  return {};
}

}  // namespace

Result<int64_t> checked_numel(const Shape& shape, const OipLimits& limits, const std::string& where) {
  auto numel = shape_numel(shape);
  if (!numel.ok() || *numel > limits.max_elements)
    return bad("shape " + shape_to_string(shape) + " has more elements than the server accepts", where);
  return *numel;
}

Status fill_tensor_from_binary(OipTensor& t, DataType dtype, std::string_view bytes, int64_t numel, const std::string& where) {
  if (dtype == DataType::kString) {
    size_t pos = 0;
    while (pos < bytes.size()) {
      if (bytes.size() - pos < 4) return bad("BYTES element header is cut off", where);
      uint32_t len;
      std::memcpy(&len, bytes.data() + pos, 4);  // little-endian on every target glassbox builds for
      pos += 4;
      if (len > bytes.size() - pos) return bad("BYTES element length " + std::to_string(len) + " runs past the tensor's bytes", where);
      t.bytes.emplace_back(bytes.substr(pos, len));
      pos += len;
      if (static_cast<int64_t>(t.bytes.size()) > numel) break;
    }
    if (static_cast<int64_t>(t.bytes.size()) != numel)
      return bad("binary BYTES data holds " + std::to_string(t.bytes.size()) + " elements but shape " + shape_to_string(t.shape) +
                     " needs " + std::to_string(numel),
                 where);
    return {};
  }
  const uint64_t want = static_cast<uint64_t>(numel) * dtype_size(dtype);
  if (bytes.size() != want)
    return bad("binary_data_size is " + std::to_string(bytes.size()) + " bytes but shape " + shape_to_string(t.shape) + " x " +
                   t.datatype + " needs " + std::to_string(want),
               where);
  if (dtype == DataType::kBool)  // one byte per element; any other value is no bool (and UB to load as one)
    for (size_t i = 0; i < bytes.size(); ++i)
      if (static_cast<unsigned char>(bytes[i]) > 1)
        return bad("BOOL element " + std::to_string(i) + " is byte " + std::to_string(static_cast<unsigned char>(bytes[i])) +
                       ", not 0 or 1", where);
  GB_ASSIGN_OR_RETURN(t.tensor, Tensor::allocate(dtype, t.shape));
  if (want) std::memcpy(t.tensor.mutable_raw(), bytes.data(), want);
  return {};
}

std::optional<DataType> oip_datatype(std::string_view name) {
  for (const auto& t : kTypes)
    if (name == t.name) return t.type;
  return std::nullopt;
}

const char* oip_datatype_name(DataType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.name;
  return "";
}

OipLimits oip_limits(const ServerOptions& options) {
  return {options.max_json_depth, options.max_inputs_per_request, options.max_tensor_elements};
}

Result<InferRequest> parse_infer_request(const HttpRequest& req, const OipLimits& limits) {
  std::string_view body = req.body, binary;
  if (auto h = req.header("inference-header-content-length")) {
    uint64_t n = 0;
    const std::string s(*h);
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
      return bad("Inference-Header-Content-Length is not a number", "headers");
    n = std::stoull(s);
    if (n > body.size())
      return bad("Inference-Header-Content-Length " + s + " is larger than the body (" + std::to_string(body.size()) + " bytes)",
                 "headers");
    binary = body.substr(n);
    body = body.substr(0, n);
  }
  GB_ASSIGN_OR_RETURN(json j, parse_json_body(body, limits.max_json_depth));
  InferRequest r;
  if (j.contains("id")) {
    if (!j["id"].is_string()) return bad("\"id\" must be a string", "body");
    r.id = j["id"].get<std::string>();
  }
  if (j.contains("parameters")) {
    if (!j["parameters"].is_object()) return bad("\"parameters\" must be an object", "body");
    r.parameters = j["parameters"];
    if (auto b = r.parameters.find("binary_data_output"); b != r.parameters.end()) {
      if (!b->is_boolean()) return bad("parameters.binary_data_output must be true or false", "body");
      r.binary_output_default = b->get<bool>();
    }
  }
  if (!j.contains("inputs") || !j["inputs"].is_array()) return bad("body has no \"inputs\" array", "body");
  const json& inputs = j["inputs"];
  if (static_cast<int>(inputs.size()) > limits.max_tensors)
    return bad(std::to_string(inputs.size()) + " inputs, over the server's max_inputs_per_request (" +
                   std::to_string(limits.max_tensors) + ")",
               "body");
  size_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    GB_ASSIGN_OR_RETURN(OipTensor t, parse_input(inputs[i], i, limits, binary, offset));
    for (const auto& prev : r.inputs)
      if (prev.name == t.name) return bad("input '" + t.name + "' is given twice", "body");
    r.inputs.push_back(std::move(t));
  }
  if (offset != binary.size())
    return bad("the binary section has " + std::to_string(binary.size() - offset) + " bytes no input claims", "body",
               "binary_data_size of the inputs must add up to the bytes after the JSON header");
  if (j.contains("outputs")) GB_RETURN_IF_ERROR(parse_outputs(j["outputs"], r, limits));
  return r;
}

namespace {

json data_to_json(const OipTensor& t) {
  json data = json::array();
  if (!t.bytes.empty() || t.datatype == "BYTES") {
    for (const auto& s : t.bytes) data.push_back(s);
    return data;
  }
  const Tensor& x = t.tensor;
  const int64_t n = x.numel();
  auto push = [&](auto* p) {
    for (int64_t i = 0; i < n; ++i) data.push_back(p[i]);
  };
  switch (x.dtype()) {
    case DataType::kBool: push(x.data<bool>()); break;
    case DataType::kUInt8: push(x.data<uint8_t>()); break;
    case DataType::kUInt16: push(x.data<uint16_t>()); break;
    case DataType::kUInt32: push(x.data<uint32_t>()); break;
    case DataType::kUInt64: push(x.data<uint64_t>()); break;
    case DataType::kInt8: push(x.data<int8_t>()); break;
    case DataType::kInt16: push(x.data<int16_t>()); break;
    case DataType::kInt32: push(x.data<int32_t>()); break;
    case DataType::kInt64: push(x.data<int64_t>()); break;
    case DataType::kFloat32: {
      const float* p = x.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        if (std::isfinite(p[i])) data.push_back(p[i]);
        else data.push_back(nullptr);  // JSON has no NaN/Inf: null, counted in parameters.nonfinite
      }
      break;
    }
    case DataType::kFloat64: {
      const double* p = x.data<double>();
      for (int64_t i = 0; i < n; ++i) {
        if (std::isfinite(p[i])) data.push_back(p[i]);
        else data.push_back(nullptr);
      }
      break;
    }
    default: break;
  }
  return data;
}

}  // namespace

void append_tensor_binary(const OipTensor& t, std::string& out) {
  if (t.datatype == "BYTES") {
    for (const auto& s : t.bytes) {
      const uint32_t len = static_cast<uint32_t>(s.size());
      out.append(reinterpret_cast<const char*>(&len), 4);
      out += s;
    }
    return;
  }
  out.append(static_cast<const char*>(t.tensor.raw()), t.tensor.nbytes());
}

Result<HttpResponse> encode_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                           const json& parameters, const std::vector<OipTensor>& outputs,
                                           const std::vector<bool>& binary) {
  nlohmann::ordered_json j;
  j["model_name"] = model;
  if (!version.empty()) j["model_version"] = version;
  if (!id.empty()) j["id"] = id;
  if (!parameters.empty()) j["parameters"] = parameters;
  j["outputs"] = nlohmann::ordered_json::array();
  std::string blob;
  bool any_binary = false;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OipTensor& t = outputs[i];
    nlohmann::ordered_json o;
    o["name"] = t.name;
    o["datatype"] = t.datatype;
    o["shape"] = t.shape;
    const bool bin = i < binary.size() && binary[i];
    if (!bin && (t.datatype == "FP16" || t.datatype == "BF16"))
      return bad("output '" + t.name + "' is " + t.datatype + ", which JSON cannot carry", "outputs",
                 "request it with parameters.binary_data: true");
    if (bin) {
      const size_t before = blob.size();
      append_tensor_binary(t, blob);
      o["parameters"] = {{"binary_data_size", blob.size() - before}};
      any_binary = true;
    } else {
      o["data"] = data_to_json(t);
      // JSON sends NaN and +-Inf as null: say how many of each, so null is not mistaken for a value.
      const NonFiniteCounts c = count_non_finite(t.tensor);
      if (c.total() > 0)
        o["parameters"] = {{"nonfinite", {{"nan", c.nan}, {"pos_inf", c.pos_inf}, {"neg_inf", c.neg_inf}}}};
    }
    j["outputs"].push_back(std::move(o));
  }
  HttpResponse r;
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (any_binary) {
    r.headers.emplace_back("Inference-Header-Content-Length", std::to_string(r.body.size()));
    r.content_type = "application/octet-stream";
    r.body += blob;
  }
  return r;
}

}  // namespace glassbox::server
