// Orders nodes so every input is produced before use; refuses cycles,
// undefined inputs and values produced twice.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "graph/graph.h"

namespace glassbox::graph {

// available: names defined before any node runs (graph inputs, initializers, outer scope).
Status topo_sort(std::vector<Node>& nodes, const std::set<std::string>& available);

}  // namespace glassbox::graph
