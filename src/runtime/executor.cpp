#include "runtime/executor.h"

#include <chrono>
#include <map>
#include <new>
#include <unordered_map>

#include "kernels/kernel_error.h"
#include "ops/registry.h"

namespace glassbox::runtime {
namespace {

std::string node_where(const graph::Node& n) { return "node '" + n.name + "' (" + n.op_type + ")"; }

// Kernels may throw (kernels::KernelError: a library kernel such as oneDNN's refused this CPU
// or these sizes, or failed); nothing unwinds past the executor: it becomes an Error, which
// the caller returns with the node's name.
Status compute_guarded(const ops::Op& op, ops::ComputeContext& ctx) {
  try {
    return op.compute(ctx);
  } catch (const kernels::KernelError& e) {
    return make_error(ErrorCode::kUnsupported, e.what(), {}, e.fix());
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::kLimitExceeded, "a kernel's memory allocation failed", {},
                      "lower the batch or sequence length, or SessionOptions::memory_limit_bytes");
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, std::string("a kernel threw: ") + e.what(), {},
                      "please report it with the model and `glassbox explain` (CPU features and kernels)");
  }
}

// Bytes of dtype x shape, refusing negative dims and int64 overflow before anything is allocated.
Result<int64_t> tensor_bytes(DataType dtype, const Shape& shape) {
  const size_t es = dtype_size(dtype);
  if (es == 0)
    return make_error(ErrorCode::kUnsupported, std::string("cannot allocate a tensor of dtype ") + dtype_name(dtype));
  GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  if (n > INT64_MAX / static_cast<int64_t>(es))
    return make_error(ErrorCode::kLimitExceeded, "tensor " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
                                                     " has more bytes than int64 can count");
  return n * static_cast<int64_t>(es);
}

// Per-run state shared by the compute contexts of one run.
struct RunState {
  const CompiledGraph* g = nullptr;
  std::vector<Tensor> values;
  // Non-tensor values (docs/runtime.md): sequences share immutable element handles; none = empty optional.
  std::vector<std::shared_ptr<const std::vector<Tensor>>> seqs;
  std::vector<uint8_t> none;
  // Sequences of maps (ZipMap): keys [C] and values [N, C]; never readable as a tensor input.
  std::vector<std::shared_ptr<const Value>> maps;
  std::vector<int64_t> owned_bytes;   // bytes counted against the budget per value (0 = alias/borrowed)
  std::vector<uint8_t> fresh_output;  // graph output allocated in its own storage for the caller
  std::shared_ptr<Buffer> arena;
  const ExecuteOptions* options = nullptr;
  int64_t live_bytes = 0;
  int64_t peak_bytes = 0;
  std::vector<uint8_t> is_graph_output;

  // `what` names the allocation; called only when the limit refuses it (every op output passes here).
  template <class What>
  Status charge(int64_t bytes, const What& what, const graph::Node& node) {
    const int64_t limit = options->memory_limit_bytes;
    if (limit > 0 && (bytes > limit || live_bytes > limit - bytes))
      return make_error(ErrorCode::kLimitExceeded,
                        what() + " needs " + std::to_string(bytes) + " bytes; the memory limit is " +
                            std::to_string(limit) + " bytes with " + std::to_string(live_bytes) + " already in use",
                        node_where(node),
                        "check the input shapes (a shape bomb?) or raise the limit (--memory-limit / "
                        "SessionOptions::memory_limit_bytes) if the model is trusted");
    live_bytes += bytes;
    peak_bytes = std::max(peak_bytes, live_bytes);
    return {};
  }

  bool has_value(int v) const { return values[v].defined() || seqs[v] || none[v] || maps[v]; }
  Value get(int v) const {
    if (maps[v]) return *maps[v];
    if (seqs[v]) return Value::sequence(*seqs[v]);
    if (none[v]) return Value::none();
    return Value::of(values[v]);
  }
  // A tensor value, or a sequence / none the caller handed in (not charged).
  void put(int v, const Value& val) {
    values[v] = val.kind == Value::Kind::kTensor ? val.tensor : Tensor();
    seqs[v] = val.kind == Value::Kind::kSequence ? std::make_shared<const std::vector<Tensor>>(val.elements) : nullptr;
    none[v] = val.kind == Value::Kind::kNone;
    maps[v] = val.kind == Value::Kind::kMapSequence ? std::make_shared<const Value>(val) : nullptr;
  }
  void release(int v) {
    live_bytes -= owned_bytes[v];
    owned_bytes[v] = 0;
    values[v] = Tensor();
    seqs[v] = nullptr;
    none[v] = 0;
    maps[v] = nullptr;
  }
};

// Bytes a string tensor holds (element objects + characters), for the memory budget.
int64_t string_bytes(const std::vector<std::string>& values) {
  int64_t bytes = static_cast<int64_t>(values.size() * sizeof(std::string));
  for (const auto& s : values) bytes += static_cast<int64_t>(s.size());
  return bytes;
}

class StepContext final : public ops::ComputeContext {
 public:
  StepContext(RunState& rs, const Step& step, ThreadPool& pool) : rs_(rs), step_(step), pool_(pool) {
    inputs_.reserve(step.inputs.size());
    for (int v : step.inputs) inputs_.push_back(v >= 0 && rs.values[v].defined() ? &rs.values[v] : nullptr);
    outputs_.resize(step.outputs.size());
    discarded_.reserve(step.outputs.size());  // pointers handed out for unused outputs must stay valid
  }
  ~StepContext() override { rs_.live_bytes -= scratch_bytes_; }

  size_t num_inputs() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const override { return step_.outputs.size(); }

  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op allocated output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    GB_ASSIGN_OR_RETURN(int64_t bytes, tensor_bytes(dtype, shape));
    const int v = step_.outputs[i];
    GB_RETURN_IF_ERROR(rs_.charge(
        bytes, [&] { return "output " + std::to_string(i) + " " + dtype_name(dtype) + shape_to_string(shape); }, *step_.node));
    Tensor t;
    const MemoryPlan* plan = rs_.options->plan;
    if (v >= 0 && plan && rs_.arena && !rs_.is_graph_output[v] && plan->slots[v].offset >= 0 &&
        bytes <= plan->slots[v].bytes) {
      GB_ASSIGN_OR_RETURN(t, Tensor::view(dtype, shape, rs_.arena, static_cast<size_t>(plan->slots[v].offset)));
    } else {
      if (v >= 0 && plan && rs_.arena && !rs_.is_graph_output[v] && rs_.options->plan_misses)
        ++*rs_.options->plan_misses;  // a run executes its nodes one after another: no race
      // Not zero-filled, like the arena: the op writes its output in full.
      auto r = Tensor::allocate_uninitialized(dtype, shape);
      if (!r.ok()) {
        rs_.live_bytes -= bytes;
        return std::move(r).take_error().with_where(node_where(*step_.node));
      }
      t = std::move(r).value();
    }
    if (v >= 0) {
      rs_.live_bytes -= rs_.owned_bytes[v];  // an op re-allocating an output replaces it
      rs_.seqs[v] = nullptr;
      rs_.none[v] = 0;
      rs_.maps[v] = nullptr;
      rs_.values[v] = std::move(t);
      rs_.owned_bytes[v] = bytes;
      rs_.fresh_output[v] = rs_.is_graph_output[v];
      if (rs_.options->record) {
        auto& e = rs_.options->record->values[v];
        e.bytes = bytes;
        e.alias_of = -1;
      }
      outputs_[i] = &rs_.values[v];
      return &rs_.values[v];
    }
    // Unused optional output: the op may still write it; it lives until the step ends.
    discarded_.push_back(std::move(t));
    scratch_bytes_ += bytes;
    outputs_[i] = &discarded_.back();
    return &discarded_.back();
  }

  Status alias_output(size_t i, const Tensor& view) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op aliased output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    const int v = step_.outputs[i];
    if (v < 0) return {};
    rs_.release(v);
    rs_.values[v] = view;
    rs_.fresh_output[v] = 0;
    if (rs_.options->record) {
      auto& e = rs_.options->record->values[v];
      e.bytes = -1;
      e.alias_of = -1;
      // The root is the input whose storage the view shares.
      for (size_t k = 0; k < step_.inputs.size(); ++k) {
        const int in = step_.inputs[k];
        if (in >= 0 && rs_.values[in].buffer() && rs_.values[in].buffer() == view.buffer()) {
          e.alias_of = in;
          break;
        }
      }
    }
    outputs_[i] = &rs_.values[v];
    return {};
  }

  Result<Tensor> allocate_scratch(DataType dtype, const Shape& shape) override {
    GB_ASSIGN_OR_RETURN(int64_t bytes, tensor_bytes(dtype, shape));
    GB_RETURN_IF_ERROR(rs_.charge(bytes, [&] { return std::string("scratch ") + dtype_name(dtype) + shape_to_string(shape); }, *step_.node));
    scratch_bytes_ += bytes;
    auto r = Tensor::allocate(dtype, shape);
    if (!r.ok()) return std::move(r).take_error().with_where(node_where(*step_.node));
    return r;
  }

  ThreadPool& pool() override { return pool_; }
  bool input_is_constant(size_t i) const override {
    return rs_.options->constants_cacheable && i < step_.inputs.size() && step_.inputs[i] >= 0 &&
           rs_.g->constants[step_.inputs[i]].defined();
  }
  Precision precision() const override { return rs_.options->precision; }
  KvCacheBinding* kv_cache(const std::string& input) override {
    if (rs_.options->kv_caches)
      for (auto& c : *rs_.options->kv_caches)
        if (c.input == input) return &c;
    return nullptr;
  }
  const std::string& node_name() const override { return step_.node->name; }

  Result<std::vector<Tensor>> run_subgraph(const std::string& attr, const std::vector<const Tensor*>& inputs) override {
    std::vector<Value> in;
    in.reserve(inputs.size());
    for (const Tensor* t : inputs) in.push_back(t ? Value::of(*t) : Value());
    GB_ASSIGN_OR_RETURN(std::vector<Value> outs, run_subgraph_values(attr, in));
    std::vector<Tensor> tensors;
    tensors.reserve(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].kind != Value::Kind::kTensor)
        return make_error(ErrorCode::kUnsupported, "subgraph output " + std::to_string(i) + " is a " + outs[i].kind_name() +
                                                       "; this op only takes tensors from its subgraph",
                          "subgraph '" + attr + "'");
      tensors.push_back(std::move(outs[i].tensor));
    }
    return tensors;
  }

  const std::vector<Tensor>* input_sequence(size_t i) const override {
    const int v = i < step_.inputs.size() ? step_.inputs[i] : -1;
    return v >= 0 ? rs_.seqs[v].get() : nullptr;
  }
  bool input_is_none(size_t i) const override {
    const int v = i < step_.inputs.size() ? step_.inputs[i] : -1;
    return v >= 0 && rs_.none[v];
  }

  Status set_output_sequence(size_t i, std::vector<Tensor> elements) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op set output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    const int v = step_.outputs[i];
    if (v < 0) return {};
    int64_t bytes = 0;
    for (auto& e : elements) {
      if (!e.defined())
        return make_error(ErrorCode::kInternal, "sequence element is undefined", node_where(*step_.node));
      // Arena slots are reused after their value's last reader: a sequence keeps its own copy.
      if (rs_.arena && e.buffer() == rs_.arena) {
        GB_ASSIGN_OR_RETURN(e, e.clone());
      }
      bytes += static_cast<int64_t>(e.nbytes());
    }
    GB_RETURN_IF_ERROR(rs_.charge(
        bytes, [&] { return "sequence output " + std::to_string(i) + " (" + std::to_string(elements.size()) + " elements)"; },
        *step_.node));
    rs_.release(v);
    rs_.owned_bytes[v] = bytes;
    rs_.seqs[v] = std::make_shared<const std::vector<Tensor>>(std::move(elements));
    return {};
  }

  Status set_output_strings(size_t i, const Shape& shape, std::vector<std::string> values) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op set output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    const int64_t bytes = string_bytes(values);
    GB_RETURN_IF_ERROR(rs_.charge(bytes, [&] { return "string output " + std::to_string(i) + " " + shape_to_string(shape); }, *step_.node));
    auto t = Tensor::strings(shape, std::move(values));
    if (!t.ok()) {
      rs_.live_bytes -= bytes;
      return std::move(t).take_error().with_where(node_where(*step_.node));
    }
    const int v = step_.outputs[i];
    if (v < 0) {
      discarded_.push_back(std::move(t).value());
      scratch_bytes_ += bytes;
      outputs_[i] = &discarded_.back();
      return {};
    }
    rs_.release(v);
    rs_.values[v] = std::move(t).value();
    rs_.owned_bytes[v] = bytes;
    rs_.fresh_output[v] = rs_.is_graph_output[v];
    if (rs_.options->record) {
      auto& e = rs_.options->record->values[v];
      e.bytes = -1;  // never in the arena
      e.alias_of = -1;
    }
    outputs_[i] = &rs_.values[v];
    return {};
  }

  Status set_output_map_sequence(size_t i, Tensor keys, Tensor values) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op set output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    const int v = step_.outputs[i];
    if (v < 0) return {};
    // Arena slots are reused after their value's last reader: the maps keep their own copies.
    GB_ASSIGN_OR_RETURN(keys, keys.clone());
    GB_ASSIGN_OR_RETURN(values, values.clone());
    const int64_t bytes = static_cast<int64_t>(values.nbytes() + keys.nbytes()) +
                          (keys.string_data() ? string_bytes(*keys.buffer()->strings()) : 0);
    GB_RETURN_IF_ERROR(rs_.charge(bytes, [&] { return "sequence-of-maps output " + std::to_string(i); }, *step_.node));
    rs_.release(v);
    rs_.owned_bytes[v] = bytes;
    rs_.maps[v] = std::make_shared<const Value>(Value::map_sequence(std::move(keys), std::move(values)));
    return {};
  }

  Status set_output_none(size_t i) override {
    if (i >= step_.outputs.size())
      return make_error(ErrorCode::kInternal, "op set output " + std::to_string(i) + " but the node has " +
                                                  std::to_string(step_.outputs.size()), node_where(*step_.node));
    const int v = step_.outputs[i];
    if (v < 0) return {};
    rs_.release(v);
    rs_.none[v] = 1;
    return {};
  }

  Result<std::vector<Value>> run_subgraph_values(const std::string& attr, const std::vector<Value>& inputs) override {
    const std::string where = "subgraph '" + attr + "'";
    for (const auto& sub : step_.subgraphs) {
      if (sub.attr != attr) continue;
      if (inputs.size() != sub.body->input_ids.size())
        return make_error(ErrorCode::kInvalidModel, "the subgraph has " + std::to_string(sub.body->input_ids.size()) +
                                                        " inputs, the op passes " + std::to_string(inputs.size()), where);
      std::vector<Value> captures;
      captures.reserve(sub.captures.size());
      for (int v : sub.captures) captures.push_back(rs_.get(v));
      ExecuteOptions eo;
      const int64_t limit = rs_.options->memory_limit_bytes;
      eo.memory_limit_bytes = limit > 0 ? std::max<int64_t>(1, limit - rs_.live_bytes) : 0;
      eo.captures = &captures;
      eo.constants_cacheable = rs_.options->constants_cacheable;
      eo.precision = rs_.options->precision;
      auto outs = execute_values(*sub.body, inputs, pool_, eo, nullptr);
      if (!outs.ok()) return std::move(outs).take_error().with_where(where);
      return outs;
    }
    return make_error(ErrorCode::kInternal, "the node has no graph attribute '" + attr + "'", where);
  }

  const std::vector<const Tensor*>& inputs() const { return inputs_; }
  const std::vector<const Tensor*>& outputs() const { return outputs_; }

 private:
  RunState& rs_;
  const Step& step_;
  ThreadPool& pool_;
  std::vector<const Tensor*> inputs_;
  std::vector<const Tensor*> outputs_;
  std::vector<Tensor> discarded_;
  int64_t scratch_bytes_ = 0;
};

}  // namespace

namespace {

// Numeric kernels never see string storage: an op outside ops::string_ops() given a string
// tensor (a model whose types ONNX inference could not tell at load) stops here; no op takes
// a sequence of maps.
Status refuse_string_inputs(const RunState& rs, const Step& step) {
  for (size_t k = 0; k < step.inputs.size(); ++k) {
    const int v = step.inputs[k];
    if (v >= 0 && !step.takes_strings && rs.values[v].dtype() == DataType::kString)
      return make_error(ErrorCode::kUnsupported,
                        "operator " + step.node->op_type + " does not take string tensors (input " + std::to_string(k) + " '" +
                            step.node->inputs[k] + "' is string" + shape_to_string(rs.values[v].shape()) + ")",
                        node_where(*step.node), "convert strings to numbers first (LabelEncoder, CategoryMapper); see docs/ml.md");
    if (v >= 0 && rs.maps[v])
      return make_error(ErrorCode::kUnsupported,
                        "operator " + step.node->op_type + " does not take a sequence of maps (input " + std::to_string(k) + " '" +
                            step.node->inputs[k] + "')", node_where(*step.node), "sequences of maps (ZipMap) are graph outputs only");
  }
  return {};
}

// Load time: the same refusals where ONNX type inference (or the file) gives an input's type.
Status refuse_typed_string_inputs(const graph::Graph& g, const graph::Node& node, bool takes_strings) {
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const std::string& name = node.inputs[k];
    if (name.empty()) continue;
    const graph::ValueInfo* vi = nullptr;
    if (auto it = g.value_info.find(name); it != g.value_info.end()) vi = &it->second;
    if (auto it = g.initializer_info.find(name); !vi && it != g.initializer_info.end()) vi = &it->second;
    for (const auto* list : {&g.inputs, &g.outputs})
      for (const auto& io : *list)
        if (!vi && io.name == name) vi = &io;
    if (!vi) continue;
    if (vi->value_type == ValueType::kMapSequence)
      return make_error(ErrorCode::kUnsupported,
                        "operator " + node.op_type + " does not take a sequence of maps (input " + std::to_string(k) + " '" + name +
                            "' is " + vi->type_note + ")",
                        node_where(node), "sequences of maps (ZipMap) are graph outputs only");
    if (!takes_strings && vi->is_tensor && vi->dtype == DataType::kString)
      return make_error(ErrorCode::kUnsupported,
                        "operator " + node.op_type + " does not take string tensors (input " + std::to_string(k) + " '" + name +
                            "' is a string tensor)",
                        node_where(node),
                        "string tensors go only to the ops listed in docs/OPERATORS.md (String tensors); convert them to "
                        "numbers first (LabelEncoder, CategoryMapper)");
  }
  return {};
}

// Subgraphs nest at most this deep in compile_graph (the loader's max_graph_depth is the real limit).
constexpr int kMaxSubgraphDepth = 64;

Result<std::shared_ptr<CompiledGraph>> compile(graph::Graph graph, int64_t opset, int depth);

// Names -> value ids for one graph, step by step: inputs and initializers first, then each node (its bodies
// compiled first, since the values they capture are read by the step), then the graph outputs and releases.
class GraphCompiler {
 public:
  GraphCompiler(graph::Graph graph, int64_t opset, int depth)
      : cg_(std::make_shared<CompiledGraph>()), opset_(opset), depth_(depth), is_subgraph_(depth > 0) {
    cg_->graph = std::move(graph);
  }

  Result<std::shared_ptr<CompiledGraph>> run() {
    const graph::Graph& g = cg_->graph;
    if (is_subgraph_) {
      for (const auto* list : {&g.inputs, &g.outputs})
        for (const auto& vi : *list)
          if (!vi.supported_type)
            return make_error(ErrorCode::kUnsupported, "subgraph value '" + vi.name + "' is a " + vi.type_note +
                                                           ", which is not supported", "graph '" + g.name + "'");
    }
    for (const auto& in : g.inputs) cg_->input_ids.push_back(id_of(in.name));
    for (const auto& [name, t] : g.initializers) cg_->constants[id_of(name)] = t;
    for (size_t s = 0; s < g.nodes.size(); ++s) GB_RETURN_IF_ERROR(add_step(g.nodes[s], static_cast<int>(s)));
    GB_RETURN_IF_ERROR(add_outputs());
    plan_releases();
    return cg_;
  }

 private:
  int id_of(const std::string& name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const int id = static_cast<int>(cg_->value_names.size());
    ids_.emplace(name, id);
    cg_->value_names.push_back(name);
    cg_->constants.emplace_back();
    cg_->producer.push_back(-1);
    cg_->last_use.push_back(-1);
    return id;
  }

  // A name no earlier node, input or initializer defines: an error at the top level,
  // a capture from the enclosing graph inside a subgraph.
  Result<int> resolve(const std::string& name, const std::string& where) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    if (!is_subgraph_)
      return make_error(ErrorCode::kInvalidModel,
                        "input '" + name + "' is not produced by any earlier node, graph input or initializer", where,
                        "re-export the model");
    const int id = id_of(name);
    cg_->capture_names.push_back(name);
    cg_->capture_ids.push_back(id);
    is_capture_.resize(cg_->value_names.size(), 0);
    is_capture_[id] = 1;
    return id;
  }

  Status add_step(const graph::Node& node, int s) {
    Step step;
    step.node = &node;
    for (const auto& in : node.inputs) {
      if (in.empty()) {
        step.inputs.push_back(-1);
        continue;
      }
      GB_ASSIGN_OR_RETURN(int v, resolve(in, node_where(node)));
      step.inputs.push_back(v);
      cg_->last_use[v] = s;
    }
    GB_RETURN_IF_ERROR(add_subgraphs(node, s, step));
    for (const auto& out : node.outputs) {
      if (out.empty()) {
        step.outputs.push_back(-1);
        continue;
      }
      const int v = id_of(out);
      const bool captured = static_cast<size_t>(v) < is_capture_.size() && is_capture_[v];
      if (cg_->producer[v] >= 0 || cg_->constants[v].defined() || captured)
        return make_error(ErrorCode::kInvalidModel,
                          "value '" + out + "' is produced twice" + (captured ? " (it names an outer-scope value)" : ""),
                          node_where(node));
      cg_->producer[v] = s;
      step.outputs.push_back(v);
    }
    auto op = ops::create_op(node, opset_);
    if (!op.ok()) return std::move(op).take_error();
    step.op = std::move(op).value();
    step.takes_strings = ops::takes_strings(node.domain, node.op_type);
    GB_RETURN_IF_ERROR(refuse_typed_string_inputs(cg_->graph, node, step.takes_strings));
    cg_->steps.push_back(std::move(step));
    return {};
  }

  // Bodies first: the values they capture are read by this step.
  Status add_subgraphs(const graph::Node& node, int s, Step& step) {
    for (const auto& [key, attr] : node.attributes) {
      const std::string where = node_where(node) + " attribute '" + key + "'";
      if (!attr.graphs.empty())
        return make_error(ErrorCode::kUnsupported, "graph-list attributes are not supported", where);
      if (!attr.g) continue;
      auto body = compile(*attr.g, opset_, depth_ + 1);
      if (!body.ok()) return std::move(body).take_error().with_where(where);
      StepSubgraph sub{key, std::move(body).value(), {}};
      for (const auto& name : sub.body->capture_names) {
        GB_ASSIGN_OR_RETURN(int v, resolve(name, where));
        sub.captures.push_back(v);
        cg_->last_use[v] = s;
      }
      step.subgraphs.push_back(std::move(sub));
    }
    return {};
  }

  Status add_outputs() {
    const graph::Graph& g = cg_->graph;
    for (const auto& out : g.outputs) {
      auto it = ids_.find(out.name);
      if (it == ids_.end() && !is_subgraph_)
        return make_error(ErrorCode::kInvalidModel, "graph output '" + out.name + "' is never produced", {}, "re-export the model");
      int v = -1;
      if (it != ids_.end()) {
        v = it->second;
      } else {
        GB_ASSIGN_OR_RETURN(v, resolve(out.name, "graph '" + g.name + "' output"));
      }
      cg_->output_ids.push_back(v);
      cg_->last_use[v] = INT_MAX;
    }
    return {};
  }

  // Release each intermediate after its last reader; never-read outputs right after their producer.
  void plan_releases() {
    for (size_t v = 0; v < cg_->value_names.size(); ++v) {
      if (cg_->last_use[v] == INT_MAX || cg_->constants[v].defined() || cg_->producer[v] < 0) continue;
      const int at = std::max(cg_->last_use[v], cg_->producer[v]);
      cg_->steps[at].release.push_back(static_cast<int>(v));
    }
  }

  std::shared_ptr<CompiledGraph> cg_;
  int64_t opset_;
  int depth_;
  bool is_subgraph_;
  std::unordered_map<std::string, int> ids_;
  std::vector<uint8_t> is_capture_;
};

Result<std::shared_ptr<CompiledGraph>> compile(graph::Graph graph, int64_t opset, int depth) {
  if (depth > kMaxSubgraphDepth)
    return make_error(ErrorCode::kLimitExceeded, "subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth));
  return GraphCompiler(std::move(graph), opset, depth).run();
}

}  // namespace

Result<std::shared_ptr<CompiledGraph>> compile_graph(graph::Graph graph, int64_t opset) {
  return compile(std::move(graph), opset, 0);
}

namespace {

// The run's value slots: constants, the feeds, the captured outer values, and the arena of the plan.
Status init_run_state(RunState& rs, const CompiledGraph& g, const std::vector<Value>& inputs, const ExecuteOptions& options) {
  rs.g = &g;
  rs.options = &options;
  const size_t n = g.value_names.size();
  rs.values.resize(n);
  rs.seqs.resize(n);
  rs.none.assign(n, 0);
  rs.maps.resize(n);
  rs.owned_bytes.assign(n, 0);
  rs.fresh_output.assign(n, 0);
  rs.is_graph_output.assign(n, 0);
  for (int v : g.output_ids) rs.is_graph_output[v] = 1;
  for (size_t v = 0; v < n; ++v)
    if (g.constants[v].defined()) rs.values[v] = g.constants[v];
  if (inputs.size() != g.input_ids.size())
    return make_error(ErrorCode::kInternal, "executor got " + std::to_string(inputs.size()) + " inputs, graph has " +
                                                std::to_string(g.input_ids.size()));
  for (size_t i = 0; i < inputs.size(); ++i) rs.put(g.input_ids[i], inputs[i]);
  const size_t num_captures = options.captures ? options.captures->size() : 0;
  if (num_captures != g.capture_ids.size())
    return make_error(ErrorCode::kInternal, "executor got " + std::to_string(num_captures) +
                                                " captured values, the subgraph captures " +
                                                std::to_string(g.capture_ids.size()));
  for (size_t i = 0; i < num_captures; ++i) {
    const Value& c = (*options.captures)[i];
    if (!c.defined())
      return make_error(ErrorCode::kInvalidArgument, "outer-scope value '" + g.value_names[g.capture_ids[i]] +
                                                         "' captured by a subgraph has no value");
    rs.put(g.capture_ids[i], c);
  }
  if (options.record) options.record->values.assign(n, {});
  if (options.plan && options.plan->arena_bytes > 0) {
    const auto bytes = static_cast<size_t>(options.plan->arena_bytes);
    if (options.arena && *options.arena && (*options.arena)->size() >= bytes) {
      rs.arena = *options.arena;
    } else {
      try {
        rs.arena = make_owned_buffer(bytes);
        if (options.arena) *options.arena = rs.arena;
      } catch (const std::bad_alloc&) {
        rs.arena = nullptr;  // fall back to one allocation per tensor
      }
    }
  }
  return {};
}

// Step s: its op's compute, the check that every output was produced, the observer, then the releases.
Status run_step(RunState& rs, const CompiledGraph& g, size_t s, ThreadPool& pool, const ExecuteOptions& options) {
  const Step& step = g.steps[s];
  const bool observe = options.observer && *options.observer;
  if (options.record)
    for (int v : step.outputs)
      if (v >= 0) options.record->values[v].def_step = static_cast<int>(s);
  GB_RETURN_IF_ERROR(refuse_string_inputs(rs, step));
  StepContext ctx(rs, step, pool);
  std::chrono::steady_clock::time_point start;
  if (observe) start = std::chrono::steady_clock::now();
  Status st = compute_guarded(*step.op, ctx);
  if (!st.ok()) return std::move(st).take_error().with_where(node_where(*step.node));
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const int v = step.outputs[i];
    if (v >= 0 && !rs.has_value(v))
      return make_error(ErrorCode::kInternal, "op did not produce output " + std::to_string(i) + " ('" +
                                                  g.value_names[v] + "')", node_where(*step.node));
  }
  if (observe) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    NodeEvent ev{s, step.node->name, step.node->op_type, step.node->inputs, ctx.inputs(), step.node->outputs,
                 ctx.outputs(), elapsed};
    Status os = (*options.observer)(ev);
    if (!os.ok()) return std::move(os).take_error();
  }
  for (int v : step.release) rs.release(v);
  return {};
}

// The graph outputs as the caller's own values: views of inputs, initializers or the arena are copied.
Result<std::vector<Value>> collect_outputs(const RunState& rs, const CompiledGraph& g) {
  std::vector<Value> outputs;
  outputs.reserve(g.output_ids.size());
  for (int v : g.output_ids) {
    if (!rs.has_value(v))
      return make_error(ErrorCode::kInternal, "graph output '" + g.value_names[v] + "' was not produced");
    if (rs.seqs[v]) {
      // Elements may view inputs or initializers: the caller gets its own copies.
      std::vector<Tensor> elements;
      elements.reserve(rs.seqs[v]->size());
      for (const Tensor& e : *rs.seqs[v]) {
        GB_ASSIGN_OR_RETURN(Tensor copy, e.clone());
        elements.push_back(std::move(copy));
      }
      outputs.push_back(Value::sequence(std::move(elements)));
      continue;
    }
    if (rs.none[v]) {
      outputs.push_back(Value::none());
      continue;
    }
    if (rs.maps[v]) {
      outputs.push_back(*rs.maps[v]);  // set_output_map_sequence made its own copies
      continue;
    }
    const Tensor& t = rs.values[v];
    if (rs.fresh_output[v]) {
      outputs.push_back(Value::of(t));
    } else {
      // Views of inputs, initializers or arena memory: the caller gets its own copy.
      GB_ASSIGN_OR_RETURN(Tensor copy, t.clone());
      outputs.push_back(Value::of(std::move(copy)));
    }
  }
  return outputs;
}

}  // namespace

Result<std::vector<Value>> execute_values(const CompiledGraph& g, const std::vector<Value>& inputs, ThreadPool& pool,
                                          const ExecuteOptions& options, RunStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  RunState rs;
  GB_RETURN_IF_ERROR(init_run_state(rs, g, inputs, options));
  for (size_t s = 0; s < g.steps.size(); ++s) GB_RETURN_IF_ERROR(run_step(rs, g, s, pool, options));
  GB_ASSIGN_OR_RETURN(std::vector<Value> outputs, collect_outputs(rs, g));
  if (stats) {
    stats->elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    stats->used_memory_plan = rs.arena != nullptr;
    stats->arena_bytes = rs.arena ? options.plan->arena_bytes : 0;
    stats->peak_bytes = rs.peak_bytes;
    stats->nodes_executed = static_cast<int64_t>(g.steps.size());
  }
  return outputs;
}

Result<std::vector<Tensor>> execute(const CompiledGraph& g, const std::vector<const Tensor*>& inputs, ThreadPool& pool,
                                    const ExecuteOptions& options, RunStats* stats) {
  std::vector<Value> in;
  in.reserve(inputs.size());
  for (const Tensor* t : inputs) in.push_back(t ? Value::of(*t) : Value());
  GB_ASSIGN_OR_RETURN(std::vector<Value> outs, execute_values(g, in, pool, options, stats));
  std::vector<Tensor> tensors;
  tensors.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].kind != Value::Kind::kTensor)
      return make_error(ErrorCode::kUnsupported, "output '" + g.value_names[g.output_ids[i]] + "' is a " +
                                                     outs[i].kind_name() + ", not a tensor",
                        {}, "use Session::run_values() for models with sequence or optional values");
    tensors.push_back(std::move(outs[i].tensor));
  }
  return tensors;
}

Result<std::vector<Tensor>> evaluate_node(const graph::Node& node, int64_t opset, const std::vector<const Tensor*>& inputs,
                                          ThreadPool& pool, int64_t memory_limit_bytes) {
  GB_ASSIGN_OR_RETURN(auto op, ops::create_op(node, opset));
  CompiledGraph g;
  Step step;
  step.node = &node;
  step.op = std::move(op);
  step.takes_strings = ops::takes_strings(node.domain, node.op_type);
  for (size_t i = 0; i < inputs.size(); ++i) {
    g.value_names.push_back(node.inputs[i]);
    g.constants.push_back(inputs[i] ? *inputs[i] : Tensor());
    step.inputs.push_back(inputs[i] ? static_cast<int>(i) : -1);
  }
  for (const auto& out : node.outputs) {
    g.output_ids.push_back(static_cast<int>(g.value_names.size()));
    step.outputs.push_back(static_cast<int>(g.value_names.size()));
    g.value_names.push_back(out);
    g.constants.emplace_back();
  }
  g.producer.assign(g.value_names.size(), -1);
  g.last_use.assign(g.value_names.size(), INT_MAX);
  g.steps.push_back(std::move(step));
  ExecuteOptions opts;
  opts.memory_limit_bytes = memory_limit_bytes;
  return execute(g, {}, pool, opts, nullptr);
}

}  // namespace glassbox::runtime
