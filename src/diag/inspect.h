// `glassbox inspect`: what is inside an ONNX model, and what to worry about
// before deploying it. The JSON form is a contract (docs/inspect.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "graph/graph.h"

namespace glassbox::diag {

struct OpCount {
  std::string op_type;
  std::string domain;
  int64_t count = 0;
  bool supported = false;
};

struct UnknownShape {
  std::string node;
  std::string op_type;
  std::string output;
};

struct Warning {
  std::string code;     // stable identifier, e.g. "dynamic_resize"
  std::string message;  // human sentence naming the nodes concerned
};

struct InspectReport {
  const graph::Model* model = nullptr;
  std::vector<OpCount> ops;  // sorted by count desc, then name
  int64_t node_count = 0;    // including nodes inside subgraphs
  int64_t initializer_count = 0;
  int64_t initializer_bytes = 0;
  std::vector<UnknownShape> unknown_shapes;
  std::vector<Warning> warnings;
};

InspectReport inspect_model(const graph::Model& model);
nlohmann::ordered_json inspect_to_json(const InspectReport& report);
std::string inspect_to_text(const InspectReport& report);

}  // namespace glassbox::diag
