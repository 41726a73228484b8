// Graph rewrite passes. Each pass is its own file in this folder, has a name
// (switchable with --disable-pass NAME) and an opt level, and logs every change.
// Passes never know about ops: anything that needs to execute a node (constant
// folding) gets an evaluator from the runtime through PassContext.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "graph/graph.h"

namespace glassbox::graph::passes {

struct PassContext {
  // Runs one node on constant inputs (nullptr = absent optional input); returns its outputs.
  // Empty function = constant folding is skipped.
  std::function<Result<std::vector<Tensor>>(const Node&, const std::vector<const Tensor*>&)> evaluate;
  // Folded results larger than this stay as nodes.
  int64_t max_folded_constant_bytes = int64_t{1} << 20;
  // Concrete values of symbolic dims (dim_param) once the input shapes of a run are known.
  std::map<std::string, int64_t> symbol_values;
  // Outputs to compute for the last position only (SessionOptions::last_position_outputs).
  std::vector<std::string> last_position_outputs;
  // In: SessionOptions::kv_cache_inputs; out: true when kv_cache_binding bound every one of them.
  std::vector<std::string> kv_cache_inputs;
  bool kv_cache_bound = false;
  // One line per change: "removed Identity 'x' (y -> x)".
  std::vector<std::string> log;
};

using PassFn = Status (*)(Graph& graph, PassContext& ctx, const std::string& pass_name);

struct PassEntry {
  const char* name;
  int level;         // runs when opt_level >= level
  const char* what;  // one line for docs and --help
  PassFn run;        // nullptr: a runtime kernel variant, switched by name like a pass
};

// Every pass, in the order run_passes applies them.
std::span<const PassEntry> all_passes();
bool is_pass_name(const std::string& name);
// Whether the pass or kernel variant `name` is on at this level with these names disabled.
bool variant_enabled(const char* name, int opt_level, const std::set<std::string>& disabled);

// Runs the passes with level <= opt_level whose names are not in `disabled`.
Status run_passes(Graph& graph, int opt_level, const std::set<std::string>& disabled, PassContext& ctx);

// Helpers shared by the passes.
// Every value name a node consumes, including outer-scope names used inside its subgraphs.
void collect_used_names(const Node& node, std::set<std::string>& used);
// Names used anywhere inside subgraphs of the graph's nodes (outer-scope captures).
std::set<std::string> names_used_in_subgraphs(const Graph& graph);
bool node_has_subgraph(const Node& node);
// Makes `t` the initializer `name`, with its ValueInfo (dtype, static shape) recorded beside it.
void set_initializer(Graph& graph, const std::string& name, Tensor t);
// An int64 constant of shape [values.size()], or a scalar (values holds one) when `scalar`.
Result<Tensor> int64_tensor(const std::vector<int64_t>& values, bool scalar = false);

// The pass functions (one per file).
Status cache_branch_inlining(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status last_position_outputs(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status identity_removal(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status shape_folding(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status constant_folding(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status dead_node_elimination(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status conv_epilogue_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status gelu_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status matmul_epilogue_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status layer_norm_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status layer_norm_quantize_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status attention_softmax_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status attention_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status decoder_attention_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status kv_cache_binding(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status qkv_projection_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);
Status quantized_matmul_fusion(Graph& graph, PassContext& ctx, const std::string& pass_name);

}  // namespace glassbox::graph::passes
