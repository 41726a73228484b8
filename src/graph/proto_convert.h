// ONNX protobuf -> glassbox IR conversion (used by the loader).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "graph/external_data.h"
#include "graph/graph.h"
#include "graph/loader.h"

namespace onnx {
class ModelProto;
class GraphProto;
class TensorProto;
class ValueInfoProto;
}  // namespace onnx

namespace glassbox::graph {

struct InitializerPayload;

struct ConvertContext {
  std::shared_ptr<const onnx::ModelProto> owner;  // keeps borrowed raw_data alive
  ExternalDataResolver* resolver;
  const LoadOptions* options;
  ExternalDataStats* external;
  // LoadOptions::map_initializers: the model file and where the main graph's stripped
  // raw_data payloads lie in it (sorted by initializer index); empty when nothing was stripped.
  std::shared_ptr<Buffer> mapped_file = nullptr;
  const std::vector<InitializerPayload>* payloads = nullptr;
  // domain -> version ("" = ai.onnx): stamps Node::domain_opset on nodes of other domains.
  const std::map<std::string, int64_t>* opset_imports = nullptr;
};

Result<Graph> convert_graph(const onnx::GraphProto& g, ConvertContext& ctx, int depth,
                            const std::set<std::string>& outer_scope);
// `payload`: the tensor's raw_data lies in ctx.mapped_file (stripped from the proto).
Result<Tensor> convert_tensor(const onnx::TensorProto& t, ConvertContext& ctx, const InitializerPayload* payload = nullptr);
ValueInfo convert_value_info(const onnx::ValueInfoProto& vi);

// Copies graph structure for shape inference; initializers larger than a few KB
// are replaced by typed graph inputs so their payload is not copied.
void copy_graph_without_payloads(const onnx::GraphProto& from, onnx::GraphProto* to);

}  // namespace glassbox::graph
