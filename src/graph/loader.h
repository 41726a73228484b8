// Loading an ONNX file into glassbox's IR, safely: limits, external-data
// containment, checker and shape inference, typed errors with context.
#pragma once

#include <cstdint>
#include <string>

#include "glassbox/error.h"
#include "graph/graph.h"

namespace onnx {
class ModelProto;
}

namespace glassbox::graph {

// Every option of the loader; each default carries its reason.
struct LoadOptions {
  // Protobuf cannot parse messages over 2 GiB; bigger models must use external data.
  int64_t max_model_bytes = int64_t{2} << 30;
  // Subgraph (If/Loop/Scan) nesting; real models nest < 5, malicious ones 10^5 to blow the stack.
  int32_t max_graph_depth = 32;
  // Largest single initializer, in elements: 4 G elements is beyond any released transformer layer.
  int64_t max_tensor_elements = int64_t{4} << 30;
  // Sum of all external-data bytes referenced by the model.
  int64_t max_external_data_bytes = int64_t{64} << 30;
  // Run onnx::checker::check_model: catches malformed graphs before we build anything.
  bool run_checker = true;
  // Run ONNX shape inference: fills value_info so inspect and planners know shapes.
  bool run_shape_inference = true;
  // A checker failure is a load error (true) or only recorded in Model::checker_error (false, for inspect).
  bool checker_failure_is_error = true;
  // Initializers over 16 KiB in the main graph become views of the mapped model file instead of
  // protobuf copies (a wire-format scan finds their raw_data; misaligned ones are copied), and
  // weights packed for GEMM release their mapped pages afterwards. false: every payload copied.
  bool map_initializers = true;
};

// Loads MODEL.onnx; external data is resolved relative to its directory only.
Result<Model> load_model(const std::string& path, const LoadOptions& options = {});

}  // namespace glassbox::graph
