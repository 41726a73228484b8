// Session: load -> passes -> compile -> (per input-shape signature) specialize,
// plan memory, execute.
#include "glassbox/session.h"

#include <algorithm>
#include <cstdio>
#include <list>
#include <map>
#include <mutex>
#include <set>

#include "core/thread_pool.h"
#include "glassbox/cpu.h"
#include "graph/loader.h"
#include "graph/passes/passes.h"
#include "ops/packed_cache.h"
#include "ops/registry.h"
#include "runtime/executor.h"
#include "runtime/session_internal.h"
#include "runtime/session_memory.h"
#include "runtime/weights_cache.h"

namespace glassbox {

namespace {

ThreadPool::Wait pool_wait_of(PoolWait w) {
  return w == PoolWait::kSpin ? ThreadPool::Wait::kSpin : w == PoolWait::kSleep ? ThreadPool::Wait::kSleep : ThreadPool::Wait::kAuto;
}

TensorSpec to_spec(const graph::ValueInfo& vi) {
  TensorSpec s;
  s.name = vi.name;
  s.dtype = vi.dtype;
  s.has_shape = vi.has_shape;
  s.type = vi.value_type;
  if (!vi.is_tensor) s.type_note = vi.type_note;
  for (const auto& d : vi.dims) {
    s.dims.push_back(d.known() ? d.value : -1);
    s.symbols.push_back(d.symbol);
  }
  return s;
}

std::vector<TensorSpec> output_specs(const graph::Graph& g) {
  std::vector<TensorSpec> specs;
  for (const auto& vi : g.outputs) specs.push_back(to_spec(vi));
  return specs;
}

std::string specs_to_string(const std::vector<TensorSpec>& specs) {
  std::string out;
  for (const auto& s : specs) out += (out.empty() ? "" : ", ") + s.to_string();
  return out;
}


}  // namespace

std::string TensorSpec::to_string() const {
  if (type != ValueType::kTensor) return name + ": " + type_note;
  std::string out = name + ": " + dtype_name(dtype);
  if (!has_shape) return out + "[?]";
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += dims[i] >= 0 ? std::to_string(dims[i]) : (symbols[i].empty() ? "?" : symbols[i]);
  }
  return out + "]";
}

std::span<const GraphPassInfo> graph_pass_names() {
  static const std::vector<GraphPassInfo> names = [] {
    std::vector<GraphPassInfo> v;
    for (const auto& p : graph::passes::all_passes()) v.push_back({p.name, p.level, p.what});
    return v;
  }();
  return names;
}

// One input-shape signature: its (possibly shape-specialized) graph and memory plan.
struct Plan {
  std::shared_ptr<runtime::CompiledGraph> graph;
  std::mutex mu;
  std::shared_ptr<const runtime::MemoryPlan> memory;  // null until one run recorded the allocations
  // The memory plan a run outgrew (SessionOptions::unspecialized_symbols): the next run records again and its
  // grown slots are doubled.
  std::shared_ptr<const runtime::MemoryPlan> outgrown;
};

class SessionImpl {
 public:
  SessionOptions options;
  graph::Model model;  // graph after load-time passes
  int64_t opset = 0;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<PassLogEntry> pass_log;
  std::unique_ptr<ThreadPool> pool;
  std::shared_ptr<runtime::CompiledGraph> base;  // compiled load-time graph
  NodeObserver observer;
  bool packed_weights = false;  // kernel variant "packed_weights" is on
  bool kv_cache_bound = false;  // the load-time passes bound every SessionOptions::kv_cache_inputs
  // SessionOptions::weights_cache: null when off or unusable (weights_cache_off says why).
  std::shared_ptr<runtime::WeightsCache> weights_cache;
  WeightsCacheReport weights_cache_off;
  // SessionOptions::max_memory's account (runtime/session_memory.h): set at load, shape figures per dry run.
  mutable std::mutex memory_mu;
  MemoryReport memory;
  MemoryReport memory_report() const {
    std::lock_guard<std::mutex> lock(memory_mu);
    return memory;
  }

  std::mutex cache_mu;
  std::list<std::pair<std::vector<Shape>, std::shared_ptr<Plan>>> cache;  // most recent first

  // Arenas kept between runs (SessionOptions::kept_arenas): a fresh arena per run costs a page
  // fault and a zeroing per page (measured: 40 % of a BERT-base request on this VM).
  std::mutex arena_mu;
  std::vector<std::shared_ptr<Buffer>> arenas;

  // The smallest kept arena of at least `bytes`, taken out of the pool; null when none fits.
  std::shared_ptr<Buffer> take_arena(int64_t bytes) {
    std::lock_guard<std::mutex> lock(arena_mu);
    auto best = arenas.end();
    for (auto it = arenas.begin(); it != arenas.end(); ++it)
      if (static_cast<int64_t>((*it)->size()) >= bytes && (best == arenas.end() || (*it)->size() < (*best)->size())) best = it;
    if (best == arenas.end()) return nullptr;
    auto a = std::move(*best);
    arenas.erase(best);
    return a;
  }

  // Keeps an arena no tensor refers to any more; beyond kept_arenas the smallest goes.
  void give_back_arena(std::shared_ptr<Buffer> a) {
    if (!a || a.use_count() != 1 || options.kept_arenas <= 0) return;
    std::lock_guard<std::mutex> lock(arena_mu);
    arenas.push_back(std::move(a));
    while (static_cast<int>(arenas.size()) > options.kept_arenas)
      arenas.erase(std::min_element(arenas.begin(), arenas.end(), [](const auto& x, const auto& y) { return x->size() < y->size(); }));
  }

  graph::passes::PassContext pass_context() const {
    graph::passes::PassContext ctx;
    ctx.max_folded_constant_bytes = options.max_folded_constant_bytes;
    ctx.last_position_outputs = options.last_position_outputs;
    ctx.kv_cache_inputs = options.kv_cache_inputs;
    const int64_t op_set = opset;
    ThreadPool* p = pool.get();
    const int64_t limit = options.memory_limit_bytes;
    ctx.evaluate = [op_set, p, limit](const graph::Node& node, const std::vector<const Tensor*>& in) {
      return runtime::evaluate_node(node, op_set, in, *p, limit);
    };
    return ctx;
  }

  // The load-time passes' log, and whether they bound the kv_cache_inputs.
  void record_passes(const graph::passes::PassContext& ctx) {
    kv_cache_bound = ctx.kv_cache_bound;
    for (const auto& line : ctx.log) {
      auto colon = line.find(':');
      pass_log.push_back({line.substr(0, colon), colon == std::string::npos ? line : line.substr(colon + 2)});
      if (options.log_passes) fprintf(stderr, "glassbox: pass %s\n", line.c_str());
    }
  }

  // Sequence elements and optional contents: the element dtype must match; shapes are free.
  static Status check_element(const TensorSpec& spec, const std::string& what, const Tensor& t, const std::string& expected) {
    if (!t.defined())
      return make_error(ErrorCode::kInvalidArgument, what + " is an undefined tensor", {}, expected);
    if (spec.dtype != DataType::kUndefined && t.dtype() != spec.dtype)
      return make_error(ErrorCode::kInvalidArgument, what + " has dtype " + dtype_name(t.dtype()) + ", expected " +
                                                         dtype_name(spec.dtype), {}, expected);
    if (t.numel() > 0 && (!t.raw() || t.buffer()->size() < t.byte_offset() + t.nbytes()))
      return make_error(ErrorCode::kInvalidArgument, what + " has no data", {}, expected);
    return {};
  }

  Status validate_values(const std::vector<NamedValue>& given, std::vector<const Value*>& ordered) const {
    const std::string expected = "the model expects " + specs_to_string(inputs);
    ordered.assign(inputs.size(), nullptr);
    for (const auto& nv : given) {
      size_t k = 0;
      while (k < inputs.size() && inputs[k].name != nv.name) ++k;
      if (k == inputs.size())
        return make_error(ErrorCode::kInvalidArgument, "unknown input name '" + nv.name + "'", {}, expected);
      if (ordered[k])
        return make_error(ErrorCode::kInvalidArgument, "input '" + nv.name + "' is given twice", {}, expected);
      const TensorSpec& spec = inputs[k];
      const Value& v = nv.value;
      const bool ok_kind = spec.type == ValueType::kOptional ||
                           (spec.type == ValueType::kSequence ? v.kind == Value::Kind::kSequence : v.kind == Value::Kind::kTensor);
      if (!ok_kind)
        return make_error(ErrorCode::kInvalidArgument, "input '" + nv.name + "' is a " + v.kind_name() + " value", {}, expected);
      if (v.kind == Value::Kind::kSequence) {
        for (size_t e = 0; e < v.elements.size(); ++e)
          GB_RETURN_IF_ERROR(check_element(spec, "input '" + nv.name + "' element " + std::to_string(e), v.elements[e], expected));
      } else if (v.kind == Value::Kind::kTensor && spec.type == ValueType::kOptional) {
        GB_RETURN_IF_ERROR(check_element(spec, "input '" + nv.name + "'", v.tensor, expected));
      } else if (v.kind == Value::Kind::kTensor) {
        GB_RETURN_IF_ERROR(check_tensor(spec, nv.name, v.tensor, expected));
      }
      ordered[k] = &v;
    }
    for (size_t k = 0; k < inputs.size(); ++k)
      if (!ordered[k])
        return make_error(ErrorCode::kInvalidArgument, "missing input '" + inputs[k].name + "'", {}, expected);
    return {};
  }

  static Status check_tensor(const TensorSpec& spec, const std::string& name, const Tensor& t, const std::string& expected) {
    const std::string got = std::string(dtype_name(t.dtype())) + shape_to_string(t.shape());
    if (spec.dtype != DataType::kUndefined && t.dtype() != spec.dtype)
      return make_error(ErrorCode::kInvalidArgument, "input '" + name + "' has dtype " + dtype_name(t.dtype()) +
                                                         ", expected " + dtype_name(spec.dtype), {}, expected);
    if (spec.has_shape && t.rank() != static_cast<int64_t>(spec.dims.size()))
      return make_error(ErrorCode::kInvalidArgument, "input '" + name + "' has rank " + std::to_string(t.rank()) +
                                                         " (" + got + "), expected rank " +
                                                         std::to_string(spec.dims.size()), {}, expected);
    if (spec.has_shape)
      for (size_t d = 0; d < spec.dims.size(); ++d)
        if (spec.dims[d] >= 0 && t.shape()[d] != spec.dims[d])
          return make_error(ErrorCode::kInvalidArgument, "input '" + name + "' has shape " + shape_to_string(t.shape()) +
                                                             ", but dim " + std::to_string(d) + " must be " +
                                                             std::to_string(spec.dims[d]), {}, expected);
    if (t.numel() > 0 && (!t.raw() || t.buffer()->size() < t.byte_offset() + t.nbytes()))
      return make_error(ErrorCode::kInvalidArgument, "input '" + name + "' has no data", {}, expected);
    return {};
  }

  static std::string signature(const std::vector<Shape>& key) {
    std::string out;
    for (const auto& s : key) {
      if (!out.empty()) out += ' ';
      out += shape_to_string(s);
    }
    return out;
  }

  // A named dim listed in SessionOptions::unspecialized_symbols, or any named dim when "*" is listed.
  bool unspecialized(const std::string& symbol) const {
    const auto& u = options.unspecialized_symbols;
    return !symbol.empty() && (std::find(u.begin(), u.end(), symbol) != u.end() || std::find(u.begin(), u.end(), "*") != u.end());
  }

  // The plan key: the input shapes, with -1 ("any size") for dims named by an unspecialized symbol.
  std::vector<Shape> plan_key(const std::vector<const Tensor*>& ordered) const {
    std::vector<Shape> key;
    for (size_t k = 0; k < ordered.size(); ++k) {
      Shape s = ordered[k]->shape();
      for (size_t d = 0; k < inputs.size() && d < inputs[k].symbols.size() && d < s.size(); ++d)
        if (unspecialized(inputs[k].symbols[d])) s[d] = -1;
      key.push_back(std::move(s));
    }
    return key;
  }

  // The plan for this signature, specialized (level 2) and cached.
  Result<std::shared_ptr<Plan>> plan_for(const std::vector<const Tensor*>& ordered) {
    const std::vector<Shape> key = plan_key(ordered);
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->first == key) {
          cache.splice(cache.begin(), cache, it);
          return cache.front().second;
        }
    }
    auto plan = std::make_shared<Plan>();
    plan->graph = base;
    std::set<std::string> disabled(options.disabled_passes.begin(), options.disabled_passes.end());
    if (options.opt_level >= 2 && !disabled.count("shape_folding")) {
      // Bind symbolic dims to this run's sizes; a symbol bound to two sizes stays unbound.
      std::map<std::string, int64_t> symbols;
      std::set<std::string> conflicting;
      for (size_t k = 0; k < inputs.size(); ++k)
        for (size_t d = 0; d < inputs[k].symbols.size() && d < key[k].size(); ++d) {
          const std::string& sym = inputs[k].symbols[d];
          if (sym.empty() || unspecialized(sym)) continue;
          auto [it, fresh] = symbols.emplace(sym, key[k][d]);
          if (!fresh && it->second != key[k][d]) conflicting.insert(sym);
        }
      for (const auto& c : conflicting) symbols.erase(c);
      if (!symbols.empty()) {
        graph::Graph g = model.graph;
        auto ctx = pass_context();
        ctx.symbol_values = symbols;
        GB_RETURN_IF_ERROR(graph::passes::run_passes(g, options.opt_level, disabled, ctx));
        if (!ctx.log.empty()) {
          if (options.log_passes)
            for (const auto& line : ctx.log) fprintf(stderr, "glassbox: pass (input shapes %s) %s\n", signature(key).c_str(), line.c_str());
          GB_ASSIGN_OR_RETURN(plan->graph, runtime::compile_graph(std::move(g), opset));
        }
      }
    }
    std::lock_guard<std::mutex> lock(cache_mu);
    cache.emplace_front(key, plan);
    while (static_cast<int>(cache.size()) > std::max(1, options.plan_cache_size)) cache.pop_back();
    return plan;
  }
};

int physical_core_count();

namespace {

// SessionOptions::weights_cache: open the file and tell the packers which constants it may
// hold (the load-time graph's initializers, by name; constants made later are packed as usual).
void open_weights_cache(SessionImpl& impl, std::shared_ptr<runtime::WeightsCacheEarly> early) {
  if (impl.options.weights_cache.empty()) return;
  if (!impl.packed_weights) {
    impl.weights_cache_off.reason = "the kernel variant packed_weights is off (opt level 0 or disabled): nothing is packed";
    return;
  }
  impl.weights_cache = runtime::open_weights_cache(impl.options, impl.model, std::move(early));
  if (runtime::weights_cache_report(*impl.weights_cache, false).state == "unavailable") return;
  const auto store = runtime::weights_cache_store(impl.weights_cache);
  const runtime::CompiledGraph& g = *impl.base;
  for (size_t v = 0; v < g.constants.size(); ++v)
    if (g.constants[v].defined() && g.constants[v].rank() == 2)
      ops::register_cacheable_constant(g.constants[v], g.value_names[v], store);
}

}  // namespace

Result<Session> Session::load(const std::string& path, const SessionOptions& options) {
  auto impl = std::make_unique<SessionImpl>();
  impl->options = options;
  if (impl->options.threads <= 0) impl->options.threads = physical_core_count();
  if (options.opt_level < 0 || options.opt_level > 2)
    return make_error(ErrorCode::kInvalidArgument, "opt level " + std::to_string(options.opt_level) + " is not 0, 1 or 2");
  for (const auto& p : options.disabled_passes)
    if (!graph::passes::is_pass_name(p)) {
      std::string names;
      for (const auto& e : graph::passes::all_passes()) names += (names.empty() ? "" : ", ") + std::string(e.name);
      return make_error(ErrorCode::kInvalidArgument, "unknown pass '" + p + "'", {}, "passes are: " + names);
    }
  if (options.precision != Precision::kFp32) {
    std::set<std::string> disabled(options.disabled_passes.begin(), options.disabled_passes.end());
    if (!graph::passes::variant_enabled("packed_weights", options.opt_level, disabled))
      return make_error(ErrorCode::kInvalidArgument,
                        std::string("precision ") + precision_name(options.precision) +
                            " runs on packed weights, but the kernel variant packed_weights is off (opt level " +
                            std::to_string(options.opt_level) + (disabled.count("packed_weights") ? ", disabled" : "") + ")",
                        {}, "use opt level >= 1 without --disable-pass packed_weights, or precision fp32");
  }
  // The declared rule (glassbox::precision_on_cpu): a precision this CPU cannot execute
  // natively is refused here, at load, never left to a kernel at the first run.
  if (const PrecisionOnCpu rule = precision_on_cpu(options.precision); !rule.runs)
    return make_error(ErrorCode::kUnsupported, rule.how, path, rule.fix);
  // The cache file's checks that need no parsed model run while the model is parsed.
  std::shared_ptr<runtime::WeightsCacheEarly> early_cache;
  if (graph::passes::variant_enabled("packed_weights", options.opt_level,
                                     std::set<std::string>(options.disabled_passes.begin(), options.disabled_passes.end())))
    early_cache = runtime::start_weights_cache(impl->options, path);
  graph::LoadOptions load_options;
  load_options.map_initializers = options.map_initializers;
  GB_ASSIGN_OR_RETURN(impl->model, graph::load_model(path, load_options));
  GB_ASSIGN_OR_RETURN(impl->memory, runtime::memory_at_load(impl->options, impl->model, path));
  graph::Model& m = impl->model;
  impl->opset = m.opset("");
  for (const auto& f : m.functions)
    return make_error(ErrorCode::kUnsupported, "model-local function '" + f + "' is not supported", path);
  // A refused ml op (ZipMap: map outputs) says why before its value types would.
  for (const auto& n : m.graph.nodes)
    if (n.domain == ops::kMlDomain)
      for (const auto& r : ops::refused_ml_ops())
        if (n.op_type == r.op_type)
          return make_error(ErrorCode::kUnsupported, std::string("operator ai.onnx.ml::") + r.op_type + " is refused: " + r.why,
                            path + ": node '" + n.name + "'");
  for (const auto& vi : m.graph.inputs) {
    if (!vi.supported_type)
      return make_error(ErrorCode::kUnsupported, "input '" + vi.name + "' is a " + vi.type_note +
                                                     ", only tensors, sequences of tensors and optionals are supported", path);
    if (vi.value_type == ValueType::kMapSequence)
      return make_error(ErrorCode::kUnsupported, "input '" + vi.name + "' is a " + vi.type_note +
                                                     "; sequences of maps are supported as outputs only (ZipMap)", path);
    impl->inputs.push_back(to_spec(vi));
  }
  for (const auto& vi : m.graph.outputs) {
    if (!vi.supported_type)
      return make_error(ErrorCode::kUnsupported, "output '" + vi.name + "' is a " + vi.type_note +
                                                     ", only tensors, sequences of tensors and optionals are supported", path);
    impl->outputs.push_back(to_spec(vi));
  }
  impl->pool = std::make_unique<ThreadPool>(impl->options.threads, pool_wait_of(impl->options.pool_wait));
  impl->packed_weights = graph::passes::variant_enabled(
      "packed_weights", impl->options.opt_level, std::set<std::string>(options.disabled_passes.begin(), options.disabled_passes.end()));
  // The internal domain is the fusion passes' own; a model file may not use it.
  for (const auto& n : m.graph.nodes)
    if (n.domain == "glassbox")
      return make_error(ErrorCode::kUnsupported, "operator domain 'glassbox' is internal to the runtime",
                        "node '" + n.name + "' (" + n.op_type + ")", "re-export the model with ai.onnx operators");
  // Refuse unsupported ops before any pass runs, so the error names the node as written.
  GB_ASSIGN_OR_RETURN(auto as_written, runtime::compile_graph(m.graph, impl->opset));
  if (impl->options.opt_level == 0) {
    impl->base = std::move(as_written);
  } else {
    as_written.reset();
    auto ctx = impl->pass_context();
    std::set<std::string> disabled(options.disabled_passes.begin(), options.disabled_passes.end());
    GB_RETURN_IF_ERROR(graph::passes::run_passes(m.graph, impl->options.opt_level, disabled, ctx));
    impl->record_passes(ctx);
    impl->outputs = output_specs(m.graph);  // a pass may declare an output's dims anew (last_position_outputs)
    GB_ASSIGN_OR_RETURN(impl->base, runtime::compile_graph(m.graph, impl->opset));
  }
  open_weights_cache(*impl, std::move(early_cache));
  return runtime::checked_at_declared_largest(Session(std::move(impl)));
}

MemoryReport Session::memory_report() const { return impl_->memory_report(); }

Result<MemoryReport> Session::check_memory(const std::vector<NamedTensor>& inputs, int64_t reserved) const {
  MemoryReport account = impl_->memory_report();
  if (reserved >= 0) account.reserved = reserved;
  auto checked = runtime::dry_run_memory(*this, inputs, account);
  if (checked.ok()) {
    std::lock_guard<std::mutex> lock(impl_->memory_mu);
    impl_->memory = *checked;
  }
  return checked;
}

Status Session::set_reserved(int64_t reserved) const {
  std::lock_guard<std::mutex> lock(impl_->memory_mu);
  return runtime::reserve_outside(impl_->options, impl_->memory, reserved);
}

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<TensorSpec>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorSpec>& Session::outputs() const { return impl_->outputs; }
const SessionOptions& Session::options() const { return impl_->options; }
const std::vector<PassLogEntry>& Session::pass_log() const { return impl_->pass_log; }
size_t Session::node_count() const { return impl_->base->steps.size(); }
int64_t Session::embedding_rows(const std::string& input) const {
  const runtime::CompiledGraph& g = *impl_->base;
  for (const auto& step : g.steps) {
    const graph::Node& n = *step.node;
    if (n.op_type != "Gather" || n.inputs.size() < 2 || n.inputs[1] != input || step.inputs[0] < 0) continue;
    const Tensor& table = g.constants[static_cast<size_t>(step.inputs[0])];
    if (table.defined() && table.rank() >= 1) return table.shape()[0];
  }
  return 0;
}

std::vector<OpDecision> Session::op_decisions() const {
  std::vector<OpDecision> out;
  const runtime::CompiledGraph& g = *impl_->base;
  for (const auto& step : g.steps) {
    std::string d = step.op ? step.op->load_decision() : std::string();
    if (!d.empty()) out.push_back({step.node->name, step.node->op_type, std::move(d)});
    if (impl_->options.precision != Precision::kFp32 && step.op) {
      std::vector<const Tensor*> constants;  // the inputs known at load, for the op's own precision decision
      for (int v : step.inputs)
        constants.push_back(v >= 0 && g.constants[static_cast<size_t>(v)].defined() ? &g.constants[static_cast<size_t>(v)] : nullptr);
      d = step.op->precision_decision(impl_->options.precision, constants);
      if (!d.empty()) out.push_back({step.node->name, step.node->op_type, std::move(d)});
    }
  }
  return out;
}

WeightsCacheReport Session::weights_cache_report(bool wait_for_write) const {
  if (!impl_->weights_cache) return impl_->weights_cache_off;
  return runtime::weights_cache_report(*impl_->weights_cache, wait_for_write);
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8Dynamic: return "int8-dynamic";
  }
  return "?";
}

Result<Precision> parse_precision(const std::string& text) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic})
    if (text == precision_name(p)) return p;
  return make_error(ErrorCode::kInvalidArgument, "precision '" + text + "' is unknown", {},
                    "use fp32, bf16 or int8-dynamic");
}
const char* pool_wait_name(PoolWait w) {
  return w == PoolWait::kAuto ? "auto" : w == PoolWait::kSpin ? "spin" : "sleep";
}

Result<PoolWait> parse_pool_wait(const std::string& text) {
  for (PoolWait w : {PoolWait::kAuto, PoolWait::kSpin, PoolWait::kSleep})
    if (text == pool_wait_name(w)) return w;
  return make_error(ErrorCode::kInvalidArgument, "pool_wait '" + text + "' is unknown", {}, "use auto, spin or sleep");
}
void Session::set_observer(NodeObserver observer) { impl_->observer = std::move(observer); }
void Session::set_unspecialized_symbols(std::vector<std::string> symbols) {
  std::lock_guard<std::mutex> lock(impl_->cache_mu);
  impl_->options.unspecialized_symbols = std::move(symbols);
  impl_->cache.clear();
}

Result<std::vector<NamedValue>> Session::run_values(const std::vector<NamedValue>& inputs, RunStats* stats) const {
  return runtime::run_values_on(*impl_, inputs, *impl_->pool, stats);
}

namespace runtime {

ThreadPool& session_pool(SessionImpl& impl) { return *impl.pool; }
bool has_observer(const SessionImpl& impl) { return static_cast<bool>(impl.observer); }

Result<std::vector<NamedValue>> run_values_on(SessionImpl& impl, const std::vector<NamedValue>& inputs, ThreadPool& pool,
                                              RunStats* stats, const NodeObserver* observer, std::vector<KvCacheBinding>* caches) {
  SessionImpl* impl_ = &impl;
  std::vector<const Value*> given;
  GB_RETURN_IF_ERROR(impl_->validate_values(inputs, given));
  // The plan cache keys on tensor shapes; non-tensor inputs count as an empty shape.
  static const Tensor kNoTensor;
  std::vector<const Tensor*> ordered;
  std::vector<Value> values;
  ordered.reserve(given.size());
  values.reserve(given.size());
  for (const Value* v : given) {
    ordered.push_back(v->kind == Value::Kind::kTensor ? &v->tensor : &kNoTensor);
    values.push_back(*v);
  }
  GB_ASSIGN_OR_RETURN(auto plan, impl_->plan_for(ordered));
  runtime::ExecuteOptions eo;
  eo.memory_limit_bytes = impl_->options.memory_limit_bytes;
  eo.observer = observer ? observer : impl_->observer ? &impl_->observer : nullptr;
  eo.constants_cacheable = impl_->packed_weights;
  eo.precision = impl_->options.precision;
  eo.kv_caches = caches;
  std::shared_ptr<const runtime::MemoryPlan> memory;
  runtime::MemoryRecord record;
  if (impl_->options.use_memory_plan) {
    std::lock_guard<std::mutex> lock(plan->mu);
    memory = plan->memory;
  }
  std::shared_ptr<Buffer> arena;
  int64_t plan_misses = 0;
  if (memory) {
    eo.plan = memory.get();
    eo.plan_misses = &plan_misses;
    arena = impl_->take_arena(memory->arena_bytes);
    eo.arena = &arena;
  } else if (impl_->options.use_memory_plan) {
    eo.record = &record;
  }
  ThreadPool::RunScope in_run(pool);  // the pool's idle threads may spin only during runs (SessionOptions::pool_wait)
  auto ran = runtime::execute_values(*plan->graph, values, pool, eo, stats);
  impl_->give_back_arena(std::move(arena));
  if (!ran.ok() && impl_->options.max_memory > 0)  // the executor's numbers, and what the budget left this run
    return runtime::explain_run_limit(std::move(ran).take_error(), impl_->memory_report());
  GB_ASSIGN_OR_RETURN(auto outs, std::move(ran));
  for (const auto& c : caches ? *caches : std::vector<KvCacheBinding>{})
    if (c.uses != 1)
      return make_error(ErrorCode::kInternal, "the KV cache bound to '" + c.input + "' was used by " + std::to_string(c.uses) +
                        " nodes of this run's plan, not 1: its outputs are not trusted", "Session::run_bound");
  if (plan_misses > 0 && !impl_->options.unspecialized_symbols.empty()) {  // outgrown: the next run records again
    std::lock_guard<std::mutex> lock(plan->mu);
    if (plan->memory == memory) {
      plan->outgrown = std::move(plan->memory);
      plan->memory = nullptr;
    }
  }
  if (eo.record) {
    std::shared_ptr<const runtime::MemoryPlan> outgrown;
    {
      std::lock_guard<std::mutex> lock(plan->mu);
      outgrown = plan->outgrown;
    }
    if (outgrown) runtime::grow_record(record, *outgrown);
    auto built = std::make_shared<const runtime::MemoryPlan>(runtime::build_memory_plan(record, plan->graph->last_use));
    std::lock_guard<std::mutex> lock(plan->mu);
    if (!plan->memory) plan->memory = std::move(built);
  }
  if (impl_->weights_cache) runtime::weights_cache_after_run(*impl_->weights_cache);
  std::vector<NamedValue> named;
  for (size_t i = 0; i < outs.size(); ++i) named.push_back({impl_->outputs[i].name, std::move(outs[i])});
  return named;
}

Result<std::vector<NamedTensor>> run_tensors_on(SessionImpl& impl, const std::vector<NamedTensor>& inputs, ThreadPool& pool,
                                                RunStats* stats, const NodeObserver* observer, std::vector<KvCacheBinding>* caches) {
  SessionImpl* impl_ = &impl;
  for (const auto* specs : {&impl_->inputs, &impl_->outputs})
    for (const auto& spec : *specs)
      if (spec.type != ValueType::kTensor)
        return make_error(ErrorCode::kUnsupported,
                          std::string(specs == &impl_->inputs ? "input '" : "output '") + spec.name + "' is a " +
                              spec.type_note + "; Session::run takes and returns tensors only",
                          {}, "use Session::run_values()");
  std::vector<NamedValue> values;
  values.reserve(inputs.size());
  for (const auto& nt : inputs) values.push_back({nt.name, Value::of(nt.tensor)});
  GB_ASSIGN_OR_RETURN(auto outs, run_values_on(impl, values, pool, stats, observer, caches));
  std::vector<NamedTensor> named;
  named.reserve(outs.size());
  for (auto& o : outs) named.push_back({std::move(o.name), std::move(o.value.tensor)});
  return named;
}

}  // namespace runtime

Result<std::vector<NamedTensor>> Session::run(const std::vector<NamedTensor>& inputs, RunStats* stats) const {
  return runtime::run_tensors_on(*impl_, inputs, *impl_->pool, stats);
}

Result<std::vector<NamedTensor>> Session::run_observed(const std::vector<NamedTensor>& inputs, const NodeObserver& observer,
                                                       RunStats* stats) const {
  return runtime::run_tensors_on(*impl_, inputs, *impl_->pool, stats, observer ? &observer : nullptr);
}

bool Session::kv_cache_bound() const { return impl_->kv_cache_bound; }

Result<std::vector<NamedTensor>> Session::run_bound(const std::vector<NamedTensor>& inputs, std::vector<KvCacheBinding>& caches,
                                                    RunStats* stats) const {
  const auto& named = impl_->options.kv_cache_inputs;
  if (!impl_->kv_cache_bound || caches.size() != named.size())
    return make_error(ErrorCode::kInvalidArgument,
                      impl_->kv_cache_bound ? std::to_string(caches.size()) + " KV caches given for " + std::to_string(named.size()) +
                                                  " kv_cache_inputs"
                                            : std::string("this session's load did not bind its kv_cache_inputs (pass log: kv_cache_binding)"),
                      "Session::run_bound", "bind one cache per SessionOptions::kv_cache_inputs, or use run()");
  for (auto& c : caches) {
    if (std::find(named.begin(), named.end(), c.input) == named.end())
      return make_error(ErrorCode::kInvalidArgument, "'" + c.input + "' is not one of SessionOptions::kv_cache_inputs",
                        "Session::run_bound");
    c.uses = 0;
  }
  return runtime::run_tensors_on(*impl_, inputs, *impl_->pool, stats, nullptr, &caches);
}

}  // namespace glassbox
