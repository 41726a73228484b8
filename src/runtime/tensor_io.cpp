#include "glassbox/tensor_io.h"

#include <onnx/onnx_pb.h>
// After onnx_pb.h (it defines ONNX_API): SequenceProto, OptionalProto.
#include <onnx/onnx-data.pb.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "graph/external_data.h"
#include "graph/proto_convert.h"

namespace glassbox::runtime {
namespace {

constexpr int64_t kMaxTensorFileBytes = int64_t{2} << 30;  // protobuf's own limit; .npy the same for symmetry

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open file", path, "check the path");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<int64_t>(in.tellg());
  if (size < 0) return make_error(ErrorCode::kIo, "cannot read file", path);
  if (size > kMaxTensorFileBytes)
    return make_error(ErrorCode::kLimitExceeded, "tensor file is larger than 2 GiB", path);
  in.seekg(0);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size && !in.read(bytes.data(), size)) return make_error(ErrorCode::kIo, "cannot read file", path);
  return bytes;
}

Status write_file(const std::string& path, const std::string& header, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(ErrorCode::kIo, "cannot create file", path, "check that the directory exists and is writable");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (bytes) out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) return make_error(ErrorCode::kIo, "write failed", path);
  return {};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct NpyType {
  const char* descr;
  DataType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", DataType::kFloat32}, {"<f8", DataType::kFloat64}, {"<f2", DataType::kFloat16},
    {"|i1", DataType::kInt8},    {"<i2", DataType::kInt16},   {"<i4", DataType::kInt32},
    {"<i8", DataType::kInt64},   {"|u1", DataType::kUInt8},   {"<u2", DataType::kUInt16},
    {"<u4", DataType::kUInt32},  {"<u8", DataType::kUInt64},  {"|b1", DataType::kBool},
    {"<c8", DataType::kComplex64}, {"<c16", DataType::kComplex128},
};

// Value of 'key' in a Python dict literal header, as raw text up to the next top-level ',' or '}'.
bool header_field(const std::string& h, const std::string& key, std::string& out) {
  auto pos = h.find("'" + key + "'");
  if (pos == std::string::npos) return false;
  pos = h.find(':', pos);
  if (pos == std::string::npos) return false;
  ++pos;
  while (pos < h.size() && h[pos] == ' ') ++pos;
  size_t end = pos;
  int depth = 0;
  while (end < h.size()) {
    const char c = h[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) return false;
    ++end;
    if (depth == 0 && c == ')') break;
  }
  out = h.substr(pos, end - pos);
  return true;
}

}  // namespace

std::string npy_descr(DataType t) {
  for (const auto& e : kNpyTypes)
    if (e.dtype == t) return e.descr;
  return {};
}

namespace {

Result<Tensor> convert_owned(const onnx::TensorProto& proto, const std::string& path) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return make_error(ErrorCode::kUnsupported, "tensor files with external data are not supported", path);
  graph::LoadOptions lo;
  graph::ExternalDataStats stats;
  graph::ExternalDataResolver resolver("");
  graph::ConvertContext ctx{nullptr, &resolver, &lo, &stats};
  auto t = graph::convert_tensor(proto, ctx);
  if (!t.ok()) return std::move(t).take_error().with_where(path);
  // The converted tensor may borrow the proto's bytes: copy before the proto goes away.
  return t->clone();
}

Result<Value> convert_sequence(const onnx::SequenceProto& seq, const std::string& path) {
  if (seq.elem_type() != onnx::SequenceProto::TENSOR && seq.elem_type() != onnx::SequenceProto::UNDEFINED)
    return make_error(ErrorCode::kUnsupported,
                      "sequence element type " + std::to_string(seq.elem_type()) + " is not supported (tensors only)", path);
  std::vector<Tensor> elements;
  elements.reserve(static_cast<size_t>(seq.tensor_values_size()));
  for (const auto& tp : seq.tensor_values()) {
    GB_ASSIGN_OR_RETURN(Tensor t, convert_owned(tp, path));
    elements.push_back(std::move(t));
  }
  return Value::sequence(std::move(elements));
}

}  // namespace

Result<LoadedTensor> read_tensor_pb(const std::string& path) {
  GB_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return make_error(ErrorCode::kInvalidArgument, "not a valid ONNX TensorProto file", path,
                      "write it with onnx.numpy_helper.from_array(...).SerializeToString(), or pass a .npy file");
  GB_ASSIGN_OR_RETURN(Tensor owned, convert_owned(proto, path));
  return LoadedTensor{proto.name(), std::move(owned)};
}

Result<Value> read_value_pb(const std::string& path, ValueType type) {
  if (type == ValueType::kTensor) {
    GB_ASSIGN_OR_RETURN(LoadedTensor t, read_tensor_pb(path));
    return Value::of(std::move(t.tensor));
  }
  GB_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (type == ValueType::kSequence) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromString(bytes)) return make_error(ErrorCode::kInvalidArgument, "not a valid ONNX SequenceProto file", path);
    return convert_sequence(seq, path);
  }
  onnx::OptionalProto opt;
  if (!opt.ParseFromString(bytes)) return make_error(ErrorCode::kInvalidArgument, "not a valid ONNX OptionalProto file", path);
  if (opt.has_tensor_value()) {
    GB_ASSIGN_OR_RETURN(Tensor t, convert_owned(opt.tensor_value(), path));
    return Value::of(std::move(t));
  }
  if (opt.has_sequence_value()) return convert_sequence(opt.sequence_value(), path);
  if (opt.elem_type() == onnx::OptionalProto::TENSOR || opt.elem_type() == onnx::OptionalProto::SEQUENCE ||
      opt.elem_type() == onnx::OptionalProto::UNDEFINED)
    return Value::none();
  return make_error(ErrorCode::kUnsupported,
                    "optional element type " + std::to_string(opt.elem_type()) + " is not supported", path);
}

Result<Tensor> read_npy(const std::string& path) {
  GB_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  auto bad = [&](const std::string& what) {
    return make_error(ErrorCode::kInvalidArgument, "not a valid .npy file: " + what, path, "write it with numpy.save");
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad("missing magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    return bad("unknown version " + std::to_string(major));
  }
  if (header_len > bytes.size() - header_start) return bad("truncated header");
  const std::string header = bytes.substr(header_start, header_len);
  std::string descr, fortran, shape_text;
  if (!header_field(header, "descr", descr) || !header_field(header, "fortran_order", fortran) ||
      !header_field(header, "shape", shape_text))
    return bad("header lacks descr/fortran_order/shape");
  if (fortran.rfind("False", 0) != 0) return bad("fortran_order arrays are not supported (use numpy.ascontiguousarray)");
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"')) return bad("bad descr");
  descr = descr.substr(1, descr.size() - 2);
  if (descr == "<b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  DataType dtype = DataType::kUndefined;
  for (const auto& e : kNpyTypes)
    if (descr == e.descr) dtype = e.dtype;
  if (dtype == DataType::kUndefined) return bad("unsupported dtype '" + descr + "' (big-endian or object arrays?)");
  Shape shape;
  {
    if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') return bad("bad shape");
    std::string inner = shape_text.substr(1, shape_text.size() - 2);
    std::stringstream ss(inner);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b == std::string::npos) continue;
      item = item.substr(b, e - b + 1);
      if (item.empty() || item.size() > 18 || item.find_first_not_of("0123456789") != std::string::npos)
        return bad("bad dimension '" + item + "'");
      shape.push_back(std::stoll(item));
    }
  }
  auto numel = shape_numel(shape);
  if (!numel.ok()) return bad(numel.error().what);
  const size_t data_start = header_start + header_len;
  const uint64_t need = static_cast<uint64_t>(*numel) * dtype_size(dtype);
  if (need != bytes.size() - data_start)
    return bad("data has " + std::to_string(bytes.size() - data_start) + " bytes but " + descr + shape_to_string(shape) +
               " needs " + std::to_string(need));
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
  if (need) std::memcpy(t.mutable_raw(), bytes.data() + data_start, need);
  return t;
}

Result<LoadedTensor> read_tensor_file(const std::string& path) {
  if (ends_with(path, ".npy")) {
    GB_ASSIGN_OR_RETURN(Tensor t, read_npy(path));
    return LoadedTensor{"", std::move(t)};
  }
  return read_tensor_pb(path);
}

Status write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto.add_dims(d);
  if (const std::string* strs = t.string_data()) {
    for (int64_t i = 0; i < t.numel(); ++i) proto.add_string_data(strs[i]);
  } else {
    proto.set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return make_error(ErrorCode::kInternal, "cannot serialize tensor", path);
  return write_file(path, bytes, nullptr, 0);
}

Status write_text_file(const std::string& path, const std::string& text) { return write_file(path, text, nullptr, 0); }

Status write_npy(const std::string& path, const Tensor& t) {
  const std::string descr = npy_descr(t.dtype());
  if (descr.empty())
    return make_error(ErrorCode::kUnsupported, std::string("dtype ") + dtype_name(t.dtype()) + " has no NumPy equivalent", path,
                      "use the .pb output");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' padded to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>((header.size() >> 8) & 0xff);
  return write_file(path, prefix + header, t.raw(), t.nbytes());
}

}  // namespace glassbox::runtime
