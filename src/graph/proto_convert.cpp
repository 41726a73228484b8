#include "graph/proto_convert.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "graph/payload_scan.h"
#include "graph/topo_sort.h"

namespace glassbox::graph {
namespace {

// Borrows bytes owned by the ModelProto (kept alive by the shared_ptr).
class ProtoBytesBuffer final : public Buffer {
 public:
  ProtoBytesBuffer(std::shared_ptr<const onnx::ModelProto> owner, const void* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}
  const void* data() const override { return data_; }
  void* mutable_data() override { return nullptr; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<const onnx::ModelProto> owner_;
  const void* data_;
  size_t size_;
};

Error bad_tensor(const std::string& name, std::string what) {
  return make_error(ErrorCode::kInvalidModel, std::move(what), "initializer '" + name + "'", "re-export the model");
}

template <class Src, class Dst>
void copy_cast(const Src& src, Dst* dst) {
  for (int i = 0; i < src.size(); ++i) dst[i] = static_cast<Dst>(src.Get(i));
}

// Copies a typed repeated field (float_data, int32_data, ...) into owned storage.
Result<Tensor> from_typed_field(const onnx::TensorProto& t, DataType dtype, const Shape& shape, int64_t numel) {
  auto count_error = [&](int64_t have) {
    return bad_tensor(t.name(), "has " + std::to_string(have) + " values but shape " + shape_to_string(shape) +
                                    " needs " + std::to_string(numel));
  };
  GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, shape));
  switch (dtype) {
    case DataType::kFloat32:
      if (t.float_data_size() != numel) return count_error(t.float_data_size());
      copy_cast(t.float_data(), out.mutable_data<float>());
      break;
    case DataType::kFloat64:
      if (t.double_data_size() != numel) return count_error(t.double_data_size());
      copy_cast(t.double_data(), out.mutable_data<double>());
      break;
    case DataType::kInt64:
      if (t.int64_data_size() != numel) return count_error(t.int64_data_size());
      copy_cast(t.int64_data(), out.mutable_data<int64_t>());
      break;
    case DataType::kUInt32:
      if (t.uint64_data_size() != numel) return count_error(t.uint64_data_size());
      copy_cast(t.uint64_data(), out.mutable_data<uint32_t>());
      break;
    case DataType::kUInt64:
      if (t.uint64_data_size() != numel) return count_error(t.uint64_data_size());
      copy_cast(t.uint64_data(), out.mutable_data<uint64_t>());
      break;
    case DataType::kInt32: case DataType::kInt16: case DataType::kInt8: case DataType::kUInt16: case DataType::kUInt8:
    case DataType::kBool: case DataType::kFloat16: case DataType::kBFloat16: {
      if (t.int32_data_size() != numel) return count_error(t.int32_data_size());
      char* dst = static_cast<char*>(out.mutable_raw());
      const size_t es = dtype_size(dtype);
      for (int64_t i = 0; i < numel; ++i) {
        const int32_t v = t.int32_data(static_cast<int>(i));
        // Little-endian host: the low bytes of the int32 are the element (float16/bfloat16 store raw bits).
        std::memcpy(dst + i * es, &v, es);
      }
      break;
    }
    default:
      return make_error(ErrorCode::kUnsupported, std::string("initializer dtype ") + dtype_name(dtype) + " is not supported",
                        "initializer '" + t.name() + "'");
  }
  return out;
}

void convert_attribute(const onnx::AttributeProto& a, Attribute& out) {
  out.name = a.name();
  out.f = a.f();
  out.i = a.i();
  out.s = a.s();
  out.floats.assign(a.floats().begin(), a.floats().end());
  out.ints.assign(a.ints().begin(), a.ints().end());
  out.strings.assign(a.strings().begin(), a.strings().end());
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: out.type = AttrType::kFloat; break;
    case onnx::AttributeProto::INT: out.type = AttrType::kInt; break;
    case onnx::AttributeProto::STRING: out.type = AttrType::kString; break;
    case onnx::AttributeProto::TENSOR: out.type = AttrType::kTensor; break;
    case onnx::AttributeProto::GRAPH: out.type = AttrType::kGraph; break;
    case onnx::AttributeProto::FLOATS: out.type = AttrType::kFloats; break;
    case onnx::AttributeProto::INTS: out.type = AttrType::kInts; break;
    case onnx::AttributeProto::STRINGS: out.type = AttrType::kStrings; break;
    case onnx::AttributeProto::TENSORS: out.type = AttrType::kTensors; break;
    case onnx::AttributeProto::GRAPHS: out.type = AttrType::kGraphs; break;
    case onnx::AttributeProto::SPARSE_TENSOR: case onnx::AttributeProto::SPARSE_TENSORS:
      out.type = AttrType::kSparseTensor; break;
    case onnx::AttributeProto::TYPE_PROTO: case onnx::AttributeProto::TYPE_PROTOS: out.type = AttrType::kTypeProto; break;
    default: out.type = AttrType::kUndefined; break;
  }
}

}  // namespace

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kUndefined: return "undefined";
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
    case AttrType::kSparseTensor: return "sparse_tensor";
    case AttrType::kTypeProto: return "type_proto";
  }
  return "unknown";
}

std::string ValueInfo::shape_string() const {
  if (!has_shape) return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i].to_string();
  }
  return s + "]";
}

ValueInfo convert_value_info(const onnx::ValueInfoProto& vi) {
  ValueInfo out;
  out.name = vi.name();
  const auto& type = vi.type();
  if (type.has_tensor_type()) {
    const auto& tt = type.tensor_type();
    out.dtype = dtype_is_valid(tt.elem_type()) ? static_cast<DataType>(tt.elem_type()) : DataType::kUndefined;
    if (tt.has_shape()) {
      out.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value();
        else if (d.has_dim_param()) dim.symbol = d.dim_param();
        out.dims.push_back(dim);
      }
    }
  } else if (type.has_sequence_type() || type.has_optional_type()) {
    out.is_tensor = false;
    const bool seq = type.has_sequence_type();
    out.value_type = seq ? ValueType::kSequence : ValueType::kOptional;
    const onnx::TypeProto& inner = seq ? type.sequence_type().elem_type() : type.optional_type().elem_type();
    std::string note = seq ? "sequence<" : "optional<";
    const onnx::TypeProto* elem = &inner;
    if (!seq && inner.has_sequence_type()) {
      note += "sequence<";
      elem = &inner.sequence_type().elem_type();
    }
    if (seq && elem->has_map_type() && elem->map_type().value_type().has_tensor_type()) {
      // ZipMap's output: seq(map(int64|string, float)).
      const int32_t kt = elem->map_type().key_type();
      const int32_t vt = elem->map_type().value_type().tensor_type().elem_type();
      if ((kt == onnx::TensorProto::INT64 || kt == onnx::TensorProto::STRING) && vt == onnx::TensorProto::FLOAT) {
        out.value_type = ValueType::kMapSequence;
        out.dtype = DataType::kFloat32;
        out.type_note = std::string("sequence<map<") + dtype_name(static_cast<DataType>(kt)) + ", float32>>";
        return out;
      }
    }
    if (elem->has_tensor_type()) {
      const int32_t et = elem->tensor_type().elem_type();
      out.dtype = dtype_is_valid(et) ? static_cast<DataType>(et) : DataType::kUndefined;
      note += std::string("tensor(") + dtype_name(out.dtype) + ")";
    } else {
      out.supported_type = false;
      note += elem->has_sequence_type() ? "sequence<...>" : elem->has_map_type() ? "map<...>" : "?";
    }
    note += (!seq && inner.has_sequence_type()) ? ">>" : ">";
    out.type_note = note;
  } else if (type.has_map_type()) {
    out.is_tensor = false;
    out.supported_type = false;
    out.type_note = "map";
  } else if (type.has_sparse_tensor_type()) {
    out.is_tensor = false;
    out.supported_type = false;
    out.type_note = "sparse_tensor";
  }
  return out;
}

Result<Tensor> convert_tensor(const onnx::TensorProto& t, ConvertContext& ctx, const InitializerPayload* payload) {
  if (!dtype_is_valid(t.data_type()))
    return bad_tensor(t.name(), "unknown data_type " + std::to_string(t.data_type()));
  const auto dtype = static_cast<DataType>(t.data_type());
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) return bad_tensor(t.name(), "negative dimension in dims " + shape_to_string(shape));
  auto numel_r = shape_numel(shape);
  if (!numel_r.ok()) return bad_tensor(t.name(), numel_r.error().what);
  const int64_t numel = numel_r.value();
  if (numel > ctx.options->max_tensor_elements)
    return make_error(ErrorCode::kLimitExceeded,
                      "has " + std::to_string(numel) + " elements, over max_tensor_elements=" +
                          std::to_string(ctx.options->max_tensor_elements),
                      "initializer '" + t.name() + "'", "raise LoadOptions::max_tensor_elements if the model is trusted");
  if (dtype == DataType::kString) {
    // TensorProto keeps strings in string_data (never raw_data or external data).
    if (t.data_location() == onnx::TensorProto::EXTERNAL || t.has_raw_data())
      return bad_tensor(t.name(), "a string tensor must hold its elements in string_data");
    if (t.string_data_size() != numel)
      return bad_tensor(t.name(), "has " + std::to_string(t.string_data_size()) + " strings but shape " +
                                      shape_to_string(shape) + " needs " + std::to_string(numel));
    return Tensor::strings(shape, std::vector<std::string>(t.string_data().begin(), t.string_data().end()));
  }
  const size_t es = dtype_size(dtype);
  const uint64_t expected = static_cast<uint64_t>(numel) * es;

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (const auto& e : t.external_data()) entries.emplace_back(e.key(), e.value());
    auto loc = ctx.resolver->resolve(entries, expected);
    if (!loc.ok()) return std::move(loc).take_error().with_where("initializer '" + t.name() + "'");
    ctx.external->tensors += 1;
    ctx.external->bytes += static_cast<int64_t>(expected);
    if (ctx.external->bytes > ctx.options->max_external_data_bytes)
      return make_error(ErrorCode::kLimitExceeded, "external data exceeds max_external_data_bytes", "initializer '" + t.name() + "'",
                        "raise LoadOptions::max_external_data_bytes");
    bool have = false;
    for (const auto& f : ctx.external->files) have = have || f == loc->file;
    if (!have) ctx.external->files.push_back(loc->file);
    if (loc->offset % std::max<size_t>(es, 1) != 0) {
      // Misaligned data cannot be read as T* without UB: copy it once.
      GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, shape));
      if (expected) std::memcpy(out.mutable_raw(), static_cast<const char*>(loc->buffer->data()) + loc->offset, expected);
      return out;
    }
    return Tensor::view(dtype, shape, loc->buffer, loc->offset);
  }
  if (payload != nullptr) {
    if (payload->size != expected)
      return bad_tensor(t.name(), "raw_data has " + std::to_string(payload->size) + " bytes but " + dtype_name(dtype) +
                                      shape_to_string(shape) + " needs " + std::to_string(expected));
    const char* bytes = static_cast<const char*>(ctx.mapped_file->data()) + payload->offset;
    if (reinterpret_cast<uintptr_t>(bytes) % std::max<size_t>(es, 1) != 0) {
      // Misaligned data cannot be read as T* without UB: an aligned copy is made on first
      // typed access only (weight packing reads the file bytes directly and never makes it).
      return Tensor::view(dtype, shape, make_lazy_aligned_slice(ctx.mapped_file, payload->offset, expected), 0);
    }
    return Tensor::view(dtype, shape, ctx.mapped_file, payload->offset);
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != expected)
      return bad_tensor(t.name(), "raw_data has " + std::to_string(raw.size()) + " bytes but " + dtype_name(dtype) +
                                      shape_to_string(shape) + " needs " + std::to_string(expected));
    if (reinterpret_cast<uintptr_t>(raw.data()) % std::max<size_t>(es, 1) != 0 || expected == 0) {
      GB_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(dtype, shape));
      if (expected) std::memcpy(out.mutable_raw(), raw.data(), expected);
      return out;
    }
    auto buf = std::make_shared<ProtoBytesBuffer>(ctx.owner, raw.data(), raw.size());
    return Tensor::view(dtype, shape, std::move(buf), 0);
  }
  return from_typed_field(t, dtype, shape, numel);
}

namespace {

// The graph attributes of node n (attribute a) into attr. The node's own outputs do not exist while
// its subgraphs run, so they are out of scope there: a branch may define a value of the same name
// (Optimum's merged decoders name each If branch's outputs as the If's).
Status convert_subgraphs(const onnx::AttributeProto& a, const onnx::NodeProto& n, ConvertContext& ctx, int depth,
                         const std::set<std::string>& available, std::set<std::string>& inner_scope, Attribute& attr) {
  std::vector<std::string> own;
  for (const auto& o : n.output())
    if (!available.count(o) && inner_scope.erase(o)) own.push_back(o);
  Status status;
  if (a.has_g()) {
    auto sg = convert_graph(a.g(), ctx, depth + 1, inner_scope);
    if (sg.ok()) attr.g = std::make_shared<Graph>(std::move(sg).value());
    else status = std::move(sg).take_error();
  }
  for (const auto& ag : a.graphs()) {
    if (!status.ok()) break;
    auto sg = convert_graph(ag, ctx, depth + 1, inner_scope);
    if (sg.ok()) attr.graphs.push_back(std::make_shared<Graph>(std::move(sg).value()));
    else status = std::move(sg).take_error();
  }
  inner_scope.insert(own.begin(), own.end());
  return status;
}

}  // namespace

Result<Graph> convert_graph(const onnx::GraphProto& g, ConvertContext& ctx, int depth,
                            const std::set<std::string>& outer_scope) {
  if (depth > ctx.options->max_graph_depth)
    return make_error(ErrorCode::kLimitExceeded,
                      "subgraphs nest deeper than max_graph_depth=" + std::to_string(ctx.options->max_graph_depth),
                      "graph '" + g.name() + "'", "raise LoadOptions::max_graph_depth if the model is trusted");
  Graph out;
  out.name = g.name();
  std::set<std::string> available = outer_scope;
  size_t next_payload = 0;  // payloads are of the main graph only, in initializer order
  for (int index = 0; index < g.initializer_size(); ++index) {
    const auto& init = g.initializer(index);
    if (init.name().empty()) return bad_tensor("", "initializer has no name");
    if (out.initializers.count(init.name())) return bad_tensor(init.name(), "initializer name appears twice");
    const InitializerPayload* payload = nullptr;
    if (depth == 0 && ctx.payloads && next_payload < ctx.payloads->size() &&
        (*ctx.payloads)[next_payload].index == index)
      payload = &(*ctx.payloads)[next_payload++];
    auto t = convert_tensor(init, ctx, payload);
    if (!t.ok()) return std::move(t).take_error();
    ValueInfo info;
    info.name = init.name();
    info.dtype = t->dtype();
    info.has_shape = true;
    for (int64_t d : t->shape()) info.dims.push_back(Dim{d, {}});
    out.initializer_info[init.name()] = info;
    out.initializers[init.name()] = std::move(t).value();
    available.insert(init.name());
  }
  if (g.sparse_initializer_size() > 0)
    return make_error(ErrorCode::kUnsupported, "sparse initializers are not supported", "graph '" + g.name() + "'");
  std::set<std::string> input_names;
  for (const auto& in : g.input()) {
    if (!input_names.insert(in.name()).second)
      return make_error(ErrorCode::kInvalidModel, "graph input '" + in.name() + "' is declared twice", "graph '" + g.name() + "'");
    available.insert(in.name());
    if (out.initializers.count(in.name())) continue;  // IR < 4: initializers are also listed as inputs
    out.inputs.push_back(convert_value_info(in));
  }
  for (const auto& vi : g.value_info()) out.value_info[vi.name()] = convert_value_info(vi);
  std::set<std::string> node_names;
  std::optional<std::set<std::string>> inner_scope;  // for subgraphs: `available` plus every node output
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    Node node;
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    if (!node.domain.empty() && ctx.opset_imports) {
      auto it = ctx.opset_imports->find(node.domain);
      node.domain_opset = it == ctx.opset_imports->end() ? 0 : it->second;
    }
    node.name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    while (!node_names.insert(node.name).second) node.name += "_";
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      Attribute attr;
      convert_attribute(a, attr);
      const auto where = [&] { return "node '" + node.name + "' (" + node.op_type + ") attribute '" + a.name() + "'"; };
      if (node.attributes.count(a.name()))
        return make_error(ErrorCode::kInvalidModel, "attribute appears twice", where());
      if (a.has_t()) {
        auto t = convert_tensor(a.t(), ctx);
        if (!t.ok()) return std::move(t).take_error().with_where(where());
        attr.t = std::move(t).value();
      }
      for (const auto& at : a.tensors()) {
        auto t = convert_tensor(at, ctx);
        if (!t.ok()) return std::move(t).take_error().with_where(where());
        attr.tensors.push_back(std::move(t).value());
      }
      // A subgraph sees this graph's values: built once per graph, and only when a subgraph
      // exists (a copy per attribute made loading quadratic in the node count).
      if ((a.has_g() || a.graphs_size() > 0) && !inner_scope) {
        inner_scope.emplace(available);
        for (const auto& o : g.node()) inner_scope->insert(o.output().begin(), o.output().end());
      }
      if (a.has_g() || a.graphs_size() > 0) {
        Status sub = convert_subgraphs(a, n, ctx, depth, available, *inner_scope, attr);
        if (!sub.ok()) return std::move(sub).take_error().with_where(where());
      }
      node.attributes[a.name()] = std::move(attr);
    }
    out.nodes.push_back(std::move(node));
  }
  GB_RETURN_IF_ERROR(topo_sort(out.nodes, available));
  std::set<std::string> produced = available;
  for (const auto& n : out.nodes) produced.insert(n.outputs.begin(), n.outputs.end());
  std::set<std::string> output_names;
  for (const auto& o : g.output()) {
    if (!output_names.insert(o.name()).second)
      return make_error(ErrorCode::kInvalidModel, "graph output '" + o.name() + "' is declared twice", "graph '" + g.name() + "'");
    if (!produced.count(o.name()))
      return make_error(ErrorCode::kInvalidModel, "graph output '" + o.name() + "' is never produced", "graph '" + g.name() + "'");
    out.outputs.push_back(convert_value_info(o));
  }
  return out;
}

void copy_graph_without_payloads(const onnx::GraphProto& from, onnx::GraphProto* to) {
  constexpr int kKeepElements = 1024;  // small constants (shape vectors) stay for data propagation
  to->set_name(from.name());
  *to->mutable_node() = from.node();
  *to->mutable_input() = from.input();
  *to->mutable_output() = from.output();
  *to->mutable_value_info() = from.value_info();
  std::set<std::string> inputs;
  for (const auto& i : from.input()) inputs.insert(i.name());
  for (const auto& init : from.initializer()) {
    int64_t n = 1;
    for (auto d : init.dims()) n *= std::max<int64_t>(d, 0);
    if (n <= kKeepElements && init.data_location() != onnx::TensorProto::EXTERNAL) {
      *to->add_initializer() = init;
      continue;
    }
    if (inputs.count(init.name())) continue;
    auto* vi = to->add_input();
    vi->set_name(init.name());
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(init.data_type());
    auto* shape = tt->mutable_shape();
    for (auto d : init.dims()) shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace glassbox::graph
