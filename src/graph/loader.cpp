#include "graph/loader.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/stat.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/external_data.h"
#include "graph/onnx_schema.h"
#include "graph/payload_scan.h"
#include "graph/proto_convert.h"
#include "graph/topo_sort.h"

namespace glassbox::graph {

namespace {

// ONNX Runtime's default-domain ops glassbox implements (ort_onnx_domain_ops.inc).
bool ort_onnx_domain_op(const std::string& op_type) {
  static const char* const kOps[] = {
#define ORT_ONNX_OP(name, why) #name,
#include "graph/ort_onnx_domain_ops.inc"
#undef ORT_ONNX_OP
  };
  for (const char* op : kOps)
    if (op_type == op) return true;
  return false;
}

}  // namespace

std::string onnx_lacks_schema(const std::string& domain, const std::string& op_type, int64_t opset) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  if (d != "" && d != "ai.onnx.ml") return {};
  if (d.empty() && ort_onnx_domain_op(op_type) &&
      onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), d) == nullptr)
    return op_type + " (ONNX Runtime's op in the ai.onnx domain; ONNX defines none: declared in "
                     "src/graph/ort_onnx_domain_ops.inc)";
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = known.find(d);
  if (range == known.end() || opset <= range->second.second) return {};
  if (onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), d) != nullptr) return {};
  return op_type + " (" + (d.empty() ? "ai.onnx" : d) + " opset " + std::to_string(opset) +
         "; the linked ONNX library knows up to " + std::to_string(range->second.second) + ")";
}

std::vector<std::string> nodes_without_onnx_schema(const Model& model) {
  std::vector<std::string> out;
  for (const auto& n : model.graph.nodes) {
    auto it = model.opset_imports.find(n.domain == "ai.onnx" ? "" : n.domain);
    if (it == model.opset_imports.end()) continue;
    std::string why = onnx_lacks_schema(n.domain, n.op_type, it->second);
    if (!why.empty()) out.push_back("node '" + n.name + "': " + why);
  }
  return out;
}

namespace {

std::string dir_of(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

// Mirrors onnx::checker::check_model, but with the model directory set so the
// checker looks for external data next to the model (not in the cwd). Our own
// resolver has already refused escaping locations before this runs.
std::string run_checker(const onnx::ModelProto& m, const std::string& model_dir) {
  try {
    if (!m.has_ir_version() || m.ir_version() <= 0) return "model has no ir_version";
    if (m.ir_version() > onnx::Version::IR_VERSION)
      return "ir_version " + std::to_string(m.ir_version()) + " is newer than this ONNX library supports (" +
             std::to_string(onnx::Version::IR_VERSION) + ")";
    std::unordered_map<std::string, int> opsets;
    for (const auto& imp : m.opset_import()) {
      const std::string d = imp.domain() == "ai.onnx" ? "" : imp.domain();
      if (opsets.count(d)) return "opset_import lists domain '" + d + "' twice";
      opsets[d] = static_cast<int>(imp.version());
    }
    if (m.ir_version() >= 3 && opsets.empty()) return "model with ir_version >= 3 must declare opset_import";
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(m.ir_version()));
    ctx.set_opset_imports(opsets);
    ctx.set_is_main_graph(true);
    ctx.set_schema_registry(onnx::OpSchemaRegistry::Instance());
    ctx.set_model_dir(model_dir.empty() ? std::string() : model_dir + "/");
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_model_local_functions(m, ctx, lex);
    onnx::checker::check_graph(m.graph(), ctx, lex);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return msg.empty() ? "checker failed" : msg;
  }
  return {};
}

// The private domain nodes are moved to in the copies onnx's checker and shape inference see
// when the linked ONNX library has no schema for them (see hide_schemaless_nodes).
constexpr const char* kNoSchemaDomain = "glassbox.no_onnx_schema";

// Moves every node the linked ONNX has no schema for (onnx_lacks_schema) to kNoSchemaDomain, in a
// copy that only onnx's checker or shape inference sees; both skip an unknown domain. Main graph.
void hide_schemaless_nodes(onnx::ModelProto& m) {
  std::map<std::string, int64_t> opsets;
  for (const auto& imp : m.opset_import()) opsets[imp.domain() == "ai.onnx" ? "" : imp.domain()] = imp.version();
  bool moved = false;
  for (auto& node : *m.mutable_graph()->mutable_node()) {
    const std::string d = node.domain() == "ai.onnx" ? "" : node.domain();
    auto imp = opsets.find(d);
    if (imp == opsets.end() || onnx_lacks_schema(d, node.op_type(), imp->second).empty()) continue;
    node.set_domain(kNoSchemaDomain);
    moved = true;
  }
  if (moved) {
    auto* imp = m.add_opset_import();
    imp->set_domain(kNoSchemaDomain);
    imp->set_version(1);
  }
}

// Payloads larger than this stay in the mapped file. copy_graph_without_payloads (used for
// the checker and shape inference) turns every initializer of more than 1024 elements into a
// graph input; 16 KiB of raw data is more than 1024 elements of any type (<= 16 bytes each),
// so no payload-free initializer ever reaches the checker.
constexpr uint64_t kMappedPayloadMinBytes = 16384;

Result<Model> build_model(std::shared_ptr<const onnx::ModelProto> owner, const std::string& model_dir,
                          const LoadOptions& options, std::shared_ptr<Buffer> mapped_file,
                          const std::vector<InitializerPayload>* payloads);

}  // namespace

Result<Model> load_model(const std::string& path, const LoadOptions& options) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return make_error(ErrorCode::kNotFound, "model file does not exist", path, "check the path");
  if (!S_ISREG(st.st_mode)) return make_error(ErrorCode::kInvalidArgument, "not a regular file", path);
  if (st.st_size > options.max_model_bytes)
    return make_error(ErrorCode::kLimitExceeded,
                      "model file is " + std::to_string(st.st_size) + " bytes, over the limit max_model_bytes=" +
                          std::to_string(options.max_model_bytes),
                      path, "raise LoadOptions::max_model_bytes, or store weights as external data");
  GB_ASSIGN_OR_RETURN(auto bytes, map_file_readonly(path));
  std::optional<StrippedModel> stripped;
  if (options.map_initializers)
    stripped = strip_initializer_payloads(static_cast<const uint8_t*>(bytes->data()), bytes->size(),
                                          kMappedPayloadMinBytes);
  auto proto = std::make_unique<onnx::ModelProto>();
  {
    const uint8_t* parse_data = stripped ? reinterpret_cast<const uint8_t*>(stripped->bytes.data())
                                         : static_cast<const uint8_t*>(bytes->data());
    const size_t parse_size = stripped ? stripped->bytes.size() : bytes->size();
    google::protobuf::io::CodedInputStream in(parse_data, static_cast<int>(parse_size));
    in.SetTotalBytesLimit(static_cast<int>(std::min<int64_t>(options.max_model_bytes, INT32_MAX)));
    // Each subgraph level costs ~4 message levels (Graph > Node > Attribute > Graph).
    in.SetRecursionLimit(4 * options.max_graph_depth + 16);
    if (!proto->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      return make_error(ErrorCode::kInvalidModel,
                        "not a valid ONNX protobuf (corrupt, truncated, or nested deeper than max_graph_depth=" +
                            std::to_string(options.max_graph_depth) + ")",
                        path, "check the file is an .onnx model; re-export it");
  }
  std::shared_ptr<const onnx::ModelProto> owner(std::move(proto));
  auto result = stripped ? build_model(owner, dir_of(path), options, bytes, &stripped->payloads)
                         : build_model(owner, dir_of(path), options, nullptr, nullptr);
  if (!result.ok()) return std::move(result).take_error().with_where(path);
  result->path = path;
  result->file_bytes = st.st_size;
  return result;
}

namespace {

Result<Model> build_model(std::shared_ptr<const onnx::ModelProto> owner, const std::string& model_dir,
                          const LoadOptions& options, std::shared_ptr<Buffer> mapped_file,
                          const std::vector<InitializerPayload>* payloads) {
  Model model;
  ExternalDataResolver resolver(model_dir);
  const onnx::ModelProto& m = *owner;

  // Initializers and IR first: it validates external data (containment, sizes)
  // before the ONNX checker touches any path.
  model.ir_version = m.ir_version();
  model.producer_name = m.producer_name();
  model.producer_version = m.producer_version();
  model.domain = m.domain();
  model.model_version = m.model_version();
  model.doc_string = m.doc_string();
  for (const auto& imp : m.opset_import()) {
    const std::string d = imp.domain() == "ai.onnx" ? "" : imp.domain();
    if (model.opset_imports.count(d))
      return make_error(ErrorCode::kInvalidModel, "opset_import lists domain '" + d + "' twice");
    model.opset_imports[d] = imp.version();
  }
  for (const auto& f : m.functions()) model.functions.push_back(f.domain() + "::" + f.name());

  if (options.run_checker) {
    model.checker_ran = true;
    // The checker reads external data paths; only run it once the IR build below validated them.
  }

  ConvertContext ctx{owner, &resolver, &options, &model.external_data, mapped_file, payloads, &model.opset_imports};
  {
    auto g = convert_graph(m.graph(), ctx, /*depth=*/0, /*outer_scope=*/{});
    if (!g.ok()) return std::move(g).take_error();
    model.graph = std::move(g).value();
  }

  if (options.run_checker) {
    // Without the stripped payloads the checker would see initializers without data: it then
    // checks a copy whose large initializers are typed graph inputs (their sizes were checked
    // against their dims by convert_tensor above).
    // Nodes the linked ONNX has no schema for are hidden from it in a copy (hide_schemaless_nodes).
    if (payloads != nullptr || !nodes_without_onnx_schema(model).empty()) {
      onnx::ModelProto checked;
      checked.set_ir_version(m.ir_version());
      *checked.mutable_opset_import() = m.opset_import();
      *checked.mutable_functions() = m.functions();
      if (payloads != nullptr) copy_graph_without_payloads(m.graph(), checked.mutable_graph());
      else *checked.mutable_graph() = m.graph();
      hide_schemaless_nodes(checked);
      model.checker_error = run_checker(checked, model_dir);
    } else {
      model.checker_error = run_checker(m, model_dir);
    }
    if (!model.checker_error.empty() && options.checker_failure_is_error)
      return make_error(ErrorCode::kInvalidModel, "ONNX checker: " + model.checker_error, {},
                        "fix the model (or inspect it with `glassbox inspect`, which reports without refusing)");
  }

  if (options.run_shape_inference) {
    model.shape_inference_ran = true;
    // Shape inference writes value_info into a copy of the graph structure; initializer
    // payloads stay where they are (raw bytes are borrowed by the IR from `owner`).
    onnx::ModelProto shapes;
    *shapes.mutable_opset_import() = m.opset_import();
    shapes.set_ir_version(m.ir_version());
    *shapes.mutable_functions() = m.functions();
    copy_graph_without_payloads(m.graph(), shapes.mutable_graph());
    hide_schemaless_nodes(shapes);
    try {
      onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(shapes, onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::exception& e) {
      model.shape_inference_errors.push_back(e.what());
    }
    for (const auto& vi : shapes.graph().value_info()) {
      if (!model.graph.value_info.count(vi.name())) model.graph.value_info[vi.name()] = convert_value_info(vi);
    }
    for (const auto& vi : shapes.graph().output()) {
      for (auto& out : model.graph.outputs)
        if (out.name == vi.name() && !out.has_shape) out = convert_value_info(vi);
    }
  }
  return model;
}

}  // namespace

}  // namespace glassbox::graph
