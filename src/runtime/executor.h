// The executor: a graph compiled to steps over value ids, run in topological
// order with a per-run memory budget, an optional static memory plan (arena)
// and an optional observer.
#pragma once

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "glassbox/session.h"
#include "glassbox/value.h"
#include "graph/graph.h"
#include "ops/op.h"
#include "runtime/memory_plan.h"

namespace glassbox::runtime {

struct CompiledGraph;

// A graph attribute of a node (If's branches, Loop's and Scan's body), compiled with it.
struct StepSubgraph {
  std::string attr;                           // attribute name ("then_branch", "body")
  std::shared_ptr<const CompiledGraph> body;
  std::vector<int> captures;                  // outer value id for each body->capture_names entry
};

struct Step {
  const graph::Node* node = nullptr;  // points into CompiledGraph::graph
  std::unique_ptr<ops::Op> op;
  std::vector<int> inputs;   // value ids, -1 = absent optional input
  std::vector<int> outputs;  // value ids, -1 = unused optional output
  std::vector<int> release;  // values whose last reader is this step
  std::vector<StepSubgraph> subgraphs;
  bool takes_strings = false;  // in ops::string_ops(): may read string tensors (every other op is refused them)
};

// A graph ready to run: ops created, names resolved to ids.
struct CompiledGraph {
  graph::Graph graph;
  std::vector<std::string> value_names;
  std::vector<Tensor> constants;  // by value id; defined() for initializers
  std::vector<int> input_ids;     // model input order
  std::vector<int> output_ids;    // model output order
  std::vector<Step> steps;
  std::vector<int> producer;      // step index per value, -1 for inputs/constants
  std::vector<int> last_use;      // step index of the last reader; INT_MAX for graph outputs
  // Subgraphs only: names this graph reads from enclosing graphs, and their value ids here.
  std::vector<std::string> capture_names;
  std::vector<int> capture_ids;
};

// Creates ops (error at the first unsupported node) and resolves names. Graph
// attributes (control-flow bodies) are compiled with their node; a name a body
// does not define is captured from the enclosing graphs.
Result<std::shared_ptr<CompiledGraph>> compile_graph(graph::Graph graph, int64_t opset);

struct ExecuteOptions {
  int64_t memory_limit_bytes = 0;
  const MemoryPlan* plan = nullptr;       // use this arena layout
  MemoryRecord* record = nullptr;          // record allocations to build a plan afterwards
  int64_t* plan_misses = nullptr;          // out, with `plan`: allocations the plan had no room for (heap instead)
  const NodeObserver* observer = nullptr;  // nullptr or empty = no observer
  const std::vector<Value>* captures = nullptr;  // subgraph runs: one per CompiledGraph::capture_ids
  // Tell ops which inputs are initializers (ComputeContext::input_is_constant), so they may
  // cache work derived from them; off = every op takes its plain path (kernel variant packed_weights).
  bool constants_cacheable = false;
  // In/out, with `plan`: an arena kept from an earlier run. Used when it is at least the plan's
  // arena_bytes (its memory is not zeroed again: ops write every element of their outputs, as the
  // plan's slot reuse already requires); otherwise a new arena is allocated and stored here, so the
  // caller can keep it for the next run (SessionOptions::kept_arenas).
  std::shared_ptr<Buffer>* arena = nullptr;
  // ComputeContext::precision (SessionOptions::precision): GEMMs on cacheable constant weights.
  Precision precision = Precision::kFp32;
  // ComputeContext::kv_cache: the caller's caches bound to past inputs (Session::run_bound); top-level graph only.
  std::vector<KvCacheBinding>* kv_caches = nullptr;
};

// Runs the graph; `inputs` are in model input order. Returns graph outputs in
// caller-owned storage.
Result<std::vector<Tensor>> execute(const CompiledGraph& g, const std::vector<const Tensor*>& inputs, ThreadPool& pool,
                                    const ExecuteOptions& options, RunStats* stats);

// The same for graphs whose inputs/outputs may be sequences or optionals.
Result<std::vector<Value>> execute_values(const CompiledGraph& g, const std::vector<Value>& inputs, ThreadPool& pool,
                                          const ExecuteOptions& options, RunStats* stats);

// Runs one node on the given inputs (constant folding); ops::create_op at `opset`.
Result<std::vector<Tensor>> evaluate_node(const graph::Node& node, int64_t opset, const std::vector<const Tensor*>& inputs,
                                          ThreadPool& pool, int64_t memory_limit_bytes);

}  // namespace glassbox::runtime
