// Ops the linked ONNX library (1.12) has no schema for: a node of a built-in domain (ai.onnx,
// ai.onnx.ml) imported at an opset newer than the library knows, whose op it does not have at
// all (ai.onnx.ml 5 TreeEnsemble). onnx's checker would refuse such a node ("No Op registered")
// and its shape inference cannot type it, so the loader hides these nodes from both (in the copy
// they see, they move to a private domain both skip). The op glassbox runs for them validates
// every attribute at load and computes its output shapes when it runs; the registry refuses any
// it does not implement (docs/ml.md). `glassbox inspect` lists them under the checker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace glassbox::graph {

// Empty when the linked ONNX has a schema for (domain, op_type) at `opset` (or the domain is not
// built-in); else what it lacks, e.g. "TreeEnsemble (ai.onnx.ml opset 5; the linked ONNX library knows up to 3)".
std::string onnx_lacks_schema(const std::string& domain, const std::string& op_type, int64_t opset);

// "node 'NAME': <onnx_lacks_schema>" for each such node of the main graph.
std::vector<std::string> nodes_without_onnx_schema(const Model& model);

}  // namespace glassbox::graph
