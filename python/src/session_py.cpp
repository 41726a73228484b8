// glassbox.Session: an ONNX model on glassbox's engine, fed and answered with NumPy arrays.
// Inference runs with the GIL released; one Session may be shared by many Python threads
// (Session::run is thread-safe; check_numerics / observer are per call, Session::run_observed).
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>

#include "arrays.h"
#include "common.h"
#include "core/process_memory.h"
#include "diag/explain.h"
#include "glassbox/session.h"
#include "glassbox/numerics_checker.h"

namespace glassbox::py_binding {
namespace {

struct PySession {
  std::shared_ptr<const Session> session;
  std::string path;
  std::map<std::string, std::string> sources;  // explain(): options given as arguments
};

py::object spec_shape(const TensorSpec& s) {
  if (!s.has_shape) return py::none();
  py::list l;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (s.dims[d] >= 0) l.append(py::int_(s.dims[d]));
    else if (d < s.symbols.size() && !s.symbols[d].empty()) l.append(py::str(s.symbols[d]));
    else l.append(py::none());
  }
  return l;
}

std::vector<NamedTensor> parse_feeds(const py::handle& feeds, std::vector<std::string>* copied) {
  if (!PyDict_Check(feeds.ptr()))
    raise_invalid("feeds must be a dict {input name: numpy.ndarray}, got " + type_name(feeds));
  std::vector<NamedTensor> out;
  for (auto item : py::reinterpret_borrow<py::dict>(feeds)) {
    const std::string name = as_utf8(item.first, "feed name");
    FeedTensor f = tensor_from_array(item.second, "feed '" + name + "'");
    if (f.copied && copied) copied->push_back(name);
    out.push_back({name, std::move(f.tensor)});
  }
  return out;
}

// Outputs as {name: array}, only those named in `wanted` (None: all, in model order).
py::dict outputs_to_dict(const PySession& self, const std::vector<NamedTensor>& outs, const py::handle& wanted) {
  py::dict d;
  if (wanted.is_none()) {
    for (const auto& o : outs) d[py::str(o.name)] = array_from_tensor(o.tensor, "output '" + o.name + "'");
    return d;
  }
  if (PyUnicode_Check(wanted.ptr()) || !PySequence_Check(wanted.ptr()))
    raise_invalid("outputs must be a list of output names or None, got " + type_name(wanted));
  for (py::handle h : py::reinterpret_borrow<py::sequence>(wanted)) {
    const std::string name = as_utf8(h, "output name");
    const NamedTensor* found = nullptr;
    for (const auto& o : outs)
      if (o.name == name) found = &o;
    if (!found) {
      std::string names;
      for (const auto& o : self.session->outputs()) names += (names.empty() ? "" : ", ") + o.name;
      raise_error(make_error(ErrorCode::kNotFound, "'" + name + "' is not an output of the model", self.path,
                             "choose among: " + names));
    }
    d[py::str(name)] = array_from_tensor(found->tensor, "output '" + name + "'");
  }
  return d;
}

// A Python callable as a NodeObserver: called with the GIL held and a dict per node; an
// exception it raises stops the run and is re-raised by run().
struct PythonObserver {
  py::handle callable;
  std::shared_ptr<std::optional<py::error_already_set>> raised = std::make_shared<std::optional<py::error_already_set>>();

  Status operator()(const NodeEvent& ev) const {
    py::gil_scoped_acquire gil;
    try {
      py::dict e;
      e["index"] = ev.index;
      e["node"] = ev.node_name;
      e["op_type"] = ev.op_type;
      e["inputs"] = std::vector<std::string>(ev.input_names.begin(), ev.input_names.end());
      e["outputs"] = std::vector<std::string>(ev.output_names.begin(), ev.output_names.end());
      py::list values;  // copies: the tensors live in an arena the next nodes reuse
      for (size_t i = 0; i < ev.outputs.size(); ++i) {
        const Tensor* t = ev.outputs[i];
        if (!t || t->dtype() == DataType::kBFloat16 || t->dtype() == DataType::kString) {
          values.append(py::none());
          continue;
        }
        values.append(array_from_tensor(*t, "output '" + ev.output_names[i] + "'").attr("copy")());
      }
      e["output_values"] = values;
      e["elapsed_ns"] = ev.elapsed.count();
      callable(e);
    } catch (py::error_already_set& err) {
      raised->emplace(std::move(err));
      return make_error(ErrorCode::kInvalidArgument, "the observer raised", "node '" + ev.node_name + "'");
    }
    return {};
  }
};

SessionOptions make_options(const py::handle& threads, const py::handle& opt_level, const py::handle& precision,
                            const py::handle& disabled_passes, const py::handle& memory_limit_bytes,
                            const py::handle& plan_cache_size, const py::handle& use_memory_plan,
                            const py::handle& map_initializers, const py::handle& weights_cache,
                            const py::handle& pool_wait) {
  SessionOptions o;
  o.threads = static_cast<int>(as_int(threads, "threads", 0, 4096));
  o.opt_level = static_cast<int>(as_int(opt_level, "opt_level", 0, 2));
  auto p = parse_precision(as_utf8(precision, "precision"));
  if (!p.ok()) raise_error(std::move(p).take_error().with_where("Session"));
  o.precision = *p;
  if (!disabled_passes.is_none()) {
    if (PyUnicode_Check(disabled_passes.ptr()) || !PySequence_Check(disabled_passes.ptr()))
      raise_invalid("disabled_passes must be a list of pass names, got " + type_name(disabled_passes));
    for (py::handle h : py::reinterpret_borrow<py::sequence>(disabled_passes)) {
      std::string name = as_utf8(h, "pass name");
      bool known = false;
      std::string names;
      for (const auto& info : graph_pass_names()) {
        known = known || name == info.name;
        names += std::string(names.empty() ? "" : ", ") + info.name;
      }
      if (!known) raise_invalid("unknown pass '" + name + "'", "disabled_passes", "choose among: " + names);
      o.disabled_passes.push_back(std::move(name));
    }
  }
  o.memory_limit_bytes = as_int(memory_limit_bytes, "memory_limit_bytes", 1, INT64_MAX);
  o.plan_cache_size = static_cast<int>(as_int(plan_cache_size, "plan_cache_size", 1, 1 << 20));
  o.use_memory_plan = as_bool(use_memory_plan, "use_memory_plan");
  o.map_initializers = as_bool(map_initializers, "map_initializers");
  if (!weights_cache.is_none()) {
    o.weights_cache = as_path(weights_cache, "weights_cache");
    if (o.weights_cache.empty()) raise_invalid("weights_cache must be a directory path or None, got ''");
  }
  auto w = parse_pool_wait(as_utf8(pool_wait, "pool_wait"));
  if (!w.ok()) raise_error(std::move(w).take_error().with_where("Session"));
  o.pool_wait = *w;
  return o;
}

// max_input_shapes: None, or {input name: [dims]} (the declared largest shape, dry-run at load under max_memory).
std::vector<NamedShape> as_input_shapes(const py::handle& h) {
  std::vector<NamedShape> out;
  if (h.is_none()) return out;
  if (!PyDict_Check(h.ptr())) raise_invalid("max_input_shapes must be a dict {input name: [dims]}, got " + type_name(h));
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(h)) {
    NamedShape s{as_utf8(k, "max_input_shapes key"), {}};
    if (PyUnicode_Check(v.ptr()) || !PySequence_Check(v.ptr()))
      raise_invalid("max_input_shapes['" + s.name + "'] must be a list of dims, got " + type_name(v));
    for (py::handle d : py::reinterpret_borrow<py::sequence>(v)) s.dims.push_back(as_int(d, "a dim of max_input_shapes['" + s.name + "']", 0, INT64_MAX));
    out.push_back(std::move(s));
  }
  return out;
}

py::dict options_dict(const SessionOptions& o) {
  py::dict d;
  d["threads"] = o.threads;
  d["opt_level"] = o.opt_level;
  d["precision"] = precision_name(o.precision);
  d["disabled_passes"] = o.disabled_passes;
  d["memory_limit_bytes"] = o.memory_limit_bytes;
  d["max_folded_constant_bytes"] = o.max_folded_constant_bytes;
  d["plan_cache_size"] = o.plan_cache_size;
  d["use_memory_plan"] = o.use_memory_plan;
  d["map_initializers"] = o.map_initializers;
  d["weights_cache"] = o.weights_cache.empty() ? py::object(py::none()) : py::object(py::str(o.weights_cache));
  d["pool_wait"] = pool_wait_name(o.pool_wait);
  d["max_memory"] = o.max_memory;
  return d;
}

}  // namespace

int64_t as_budget(const py::handle& h, const std::string& where) {
  if (h.is_none()) return 0;
  if (PyUnicode_Check(h.ptr())) {
    auto b = parse_byte_size(as_utf8(h, "max_memory"));
    if (!b.ok()) raise_error(std::move(b).take_error().with_where(where));
    return *b;
  }
  return as_int(h, "max_memory", 1, INT64_MAX);
}

py::dict memory_report_dict(const MemoryReport& r) {
  py::dict d;
  d["budget"] = r.budget;
  d["reserved"] = r.reserved;
  d["weights"] = r.weights;
  d["run_limit"] = r.run_limit;
  d["shape"] = r.shape;
  d["first_run"] = r.first_run;
  d["arena"] = r.arena;
  d["total"] = r.total();
  return d;
}

std::map<std::string, std::string> argument_sources(const SessionOptions& given) {
  const SessionOptions d;
  std::map<std::string, std::string> s;
  auto mark = [&](const char* name, bool differs) {
    if (differs) s[std::string("session.") + name] = "argument";
  };
  mark("threads", given.threads != d.threads);
  mark("opt_level", given.opt_level != d.opt_level);
  mark("precision", given.precision != d.precision);
  mark("disabled_passes", given.disabled_passes != d.disabled_passes);
  mark("memory_limit_bytes", given.memory_limit_bytes != d.memory_limit_bytes);
  mark("plan_cache_size", given.plan_cache_size != d.plan_cache_size);
  mark("use_memory_plan", given.use_memory_plan != d.use_memory_plan);
  mark("map_initializers", given.map_initializers != d.map_initializers);
  mark("weights_cache", given.weights_cache != d.weights_cache);
  mark("pool_wait", given.pool_wait != d.pool_wait);
  return s;
}

void bind_session(py::module_& m) {
  py::class_<TensorSpec>(m, "TensorInfo", "A declared input or output of the model.")
      .def_readonly("name", &TensorSpec::name, "Input / output name.")
      .def_property_readonly("dtype", [](const TensorSpec& s) { return numpy_dtype_name(s.dtype); },
                             "Element type as a numpy dtype name ('float32', 'int64', 'bool', ...).")
      .def_property_readonly("shape", &spec_shape,
                             "Dims: int for fixed, str for a named symbolic dim, None for unknown; None if the rank is unknown.")
      .def_property_readonly("kind", [](const TensorSpec& s) { return s.type == ValueType::kTensor ? "tensor" : s.type_note; },
                             "'tensor', or the declared type of a sequence / optional value.")
      .def("__repr__", [](const TensorSpec& s) { return "TensorInfo(" + s.to_string() + ")"; });

  const SessionOptions d;
  py::class_<PySession>(m, "Session",
                        "An ONNX model loaded, validated and optimized by glassbox's engine. Every option is explicit; "
                        "the defaults are SessionOptions' (see explain()).")
      .def(py::init([](const py::handle& path, const py::handle& threads, const py::handle& opt_level,
                       const py::handle& precision, const py::handle& disabled_passes,
                       const py::handle& memory_limit_bytes, const py::handle& plan_cache_size,
                       const py::handle& use_memory_plan, const py::handle& map_initializers,
                       const py::handle& weights_cache, const py::handle& pool_wait, const py::handle& max_memory,
                       const py::handle& max_input_shapes) {
             const std::string p = as_path(path, "path");
             SessionOptions o = make_options(threads, opt_level, precision, disabled_passes, memory_limit_bytes,
                                             plan_cache_size, use_memory_plan, map_initializers, weights_cache, pool_wait);
             // docs/memory.md: the process (the interpreter and this module, measured) is what the session counts
             // outside itself, as `glassbox run --max-memory` does.
             o.max_memory = as_budget(max_memory, "Session");
             o.max_input_shapes = as_input_shapes(max_input_shapes);
             if (o.max_memory > 0) o.max_memory_reserved = process_baseline_rss_bytes();
             auto r = [&] {
               py::gil_scoped_release nogil;
               return Session::load(p, o);
             }();
             return PySession{std::make_shared<const Session>(unwrap(std::move(r))), p, argument_sources(o)};
           }),
           py::arg("path"), py::kw_only(), py::arg("threads") = d.threads, py::arg("opt_level") = d.opt_level,
           py::arg("precision") = "fp32", py::arg("disabled_passes") = py::none(),
           py::arg("memory_limit_bytes") = d.memory_limit_bytes, py::arg("plan_cache_size") = d.plan_cache_size,
           py::arg("use_memory_plan") = d.use_memory_plan, py::arg("map_initializers") = d.map_initializers,
           py::arg("weights_cache") = py::none(), py::arg("pool_wait") = pool_wait_name(d.pool_wait),
           py::arg("max_memory") = py::none(), py::arg("max_input_shapes") = py::none(),
           "Loads MODEL.onnx. threads=0: physical cores; opt_level 0 runs the graph as written, 2 (default) folds "
           "shapes per input signature; precision: 'fp32' (default: the exported model's arithmetic), 'bf16' or "
           "'int8-dynamic' (GEMMs on constant weights in lower precision: faster, outputs change; "
           "measure with `glassbox accuracy`); weights_cache: a directory for the packed weights (default None: off; "
           "later loads map them instead of packing, see weights_cache_report()); pool_wait: 'auto' (default: idle pool "
           "threads poll up to 200 us for the next op only while a core is free), 'spin' (always) or 'sleep' (never); "
           "max_memory (None: off; bytes or '512M'): the process + weights (+ the dry runs of max_input_shapes, "
           "{name: [dims]}) must fit or the load raises LimitExceeded naming every number, and each run's tensors are "
           "limited to what is left (docs/memory.md); see memory_report().")
      .def("memory_report", [](const PySession& s) { return memory_report_dict(s.session->memory_report()); },
           "The memory account (docs/memory.md): budget, reserved (the process), weights, run_limit, and the last dry "
           "run's shape, first_run, arena and total, in bytes.")
      .def_property_readonly("inputs", [](const PySession& s) { return s.session->inputs(); }, "Declared inputs (TensorInfo).")
      .def_property_readonly("outputs", [](const PySession& s) { return s.session->outputs(); }, "Declared outputs (TensorInfo).")
      .def_property_readonly("options", [](const PySession& s) { return options_dict(s.session->options()); },
                             "The options in effect (threads resolved) as a dict.")
      .def_property_readonly("path", [](const PySession& s) { return s.path; }, "The model file.")
      .def(
          "weights_cache_report",
          [](const PySession& s, bool wait_for_write) {
            WeightsCacheReport r;
            {
              py::gil_scoped_release nogil;
              r = s.session->weights_cache_report(wait_for_write);
            }
            return json_to_python(diag::weights_cache_to_json(r).dump());
          },
          py::kw_only(), py::arg("wait_for_write") = false,
          "The packed-weights cache of this load: file, state (off | hit | miss | rebuilt | unavailable), reason, "
          "packings, bytes, open_ms, used / refused, and the write's outcome (wait_for_write=True waits for the "
          "write after the first run), as `glassbox explain MODEL --weights-cache DIR` prints it.")
      .def_property_readonly("node_count", [](const PySession& s) { return s.session->node_count(); },
                             "Nodes after the load-time passes.")
      .def_property_readonly(
          "pass_log",
          [](const PySession& s) {
            py::list l;
            for (const auto& e : s.session->pass_log()) l.append(py::make_tuple(e.pass, e.message));
            return l;
          },
          "What each graph pass changed at load, as (pass, message) tuples.")
      .def(
          "run",
          [](const PySession& self, const py::handle& feeds, const py::handle& outputs, const py::handle& check_numerics,
             const py::handle& observer) {
            std::vector<NamedTensor> in = parse_feeds(feeds, nullptr);
            const bool numerics = as_bool(check_numerics, "check_numerics");
            if (!observer.is_none() && !PyCallable_Check(observer.ptr()))
              raise_invalid("observer must be callable, got " + type_name(observer));
            std::optional<PythonObserver> py_observer;
            if (!observer.is_none()) py_observer = PythonObserver{observer};
            auto r = [&] {
              py::gil_scoped_release nogil;
              if (!numerics && !py_observer) return self.session->run(in);
              NodeObserver checker = numerics ? runtime::make_numerics_checker() : NodeObserver{};
              NodeObserver both = [&](const NodeEvent& ev) -> Status {
                if (checker) GB_RETURN_IF_ERROR(checker(ev));
                if (py_observer) return (*py_observer)(ev);
                return {};
              };
              return self.session->run_observed(in, both);
            }();
            if (py_observer && py_observer->raised->has_value()) {
              py::error_already_set err = std::move(**py_observer->raised);
              py_observer->raised->reset();
              err.restore();
              throw py::error_already_set();
            }
            std::vector<NamedTensor> outs = unwrap(std::move(r));
            py::dict result = outputs_to_dict(self, outs, outputs);
            {  // the feed views drop their array references here, with the GIL held
              std::vector<NamedTensor>().swap(in);
            }
            return result;
          },
          py::arg("feeds"), py::arg("outputs") = py::none(), py::kw_only(), py::arg("check_numerics") = false,
          py::arg("observer") = py::none(),
          "Runs the model on {input name: numpy.ndarray} and returns {output name: numpy.ndarray} (all outputs, or "
          "those named in `outputs`). Every input must be given with its declared dtype (no casting) and rank. "
          "A C-contiguous, aligned, native-endian array is used in place; any other layout is copied once. "
          "Outputs are returned without copying. The GIL is released while the model runs. "
          "check_numerics=True: InvalidInput naming the first node that produces a NaN/Inf. "
          "observer: called after every node with a dict (index, node, op_type, inputs, outputs, output_values "
          "(copies), elapsed_ns); an exception it raises stops the run and propagates.")
      .def(
          "run_unpadded",
          [](const PySession& self, const py::handle& feeds, const py::handle& outputs, const py::handle& mask_input,
             const py::handle& length_multiple, const py::handle& sequences_in_parallel) {
            std::vector<NamedTensor> in = parse_feeds(feeds, nullptr);
            UnpadOptions u;
            u.mask_input = as_utf8(mask_input, "mask_input");
            u.length_multiple = as_int(length_multiple, "length_multiple", 1, 1 << 20);
            u.sequences_in_parallel = as_bool(sequences_in_parallel, "sequences_in_parallel");
            auto r = [&] {
              py::gil_scoped_release nogil;
              return self.session->run_unpadded(in, u);
            }();
            std::vector<NamedTensor> outs = unwrap(std::move(r));
            py::dict result = outputs_to_dict(self, outs, outputs);
            std::vector<NamedTensor>().swap(in);
            return result;
          },
          py::arg("feeds"), py::arg("outputs") = py::none(), py::kw_only(),
          py::arg("mask_input") = UnpadOptions{}.mask_input, py::arg("length_multiple") = UnpadOptions{}.length_multiple,
          py::arg("sequences_in_parallel") = UnpadOptions{}.sequences_in_parallel,
          "Runs a right-padded batch without computing on its padding: each row of the [batch, seq] mask input must "
          "be ones then zeros; token outputs come back with 0 at padded positions, pooled ones stacked. Equal to "
          "run() on the real tokens only for models whose attention masks padding.")
      .def(
          "explain",
          [](const PySession& self) {
            diag::EffectiveOptions eo;
            eo.session = self.session->options();
            eo.sources = self.sources;
            nlohmann::ordered_json j = diag::explain_to_json(diag::explain_options(eo));
            j["cpu"] = diag::cpu_report_to_json(cpu_report());  // as `glassbox explain --json`
            return json_to_python(j.dump());
          },
          "Every effective option with value, default, source, reason and risk, and this CPU's features, kernels and "
          "precision verdicts under \"cpu\" (as `glassbox explain MODEL.onnx --json`).")
      .def("__repr__", [](const PySession& s) {
        return "Session('" + s.path + "', inputs=" + std::to_string(s.session->inputs().size()) +
               ", outputs=" + std::to_string(s.session->outputs().size()) + ")";
      });

  m.def(
      "_bench_cpp_run",
      [](const PySession& self, const py::handle& feeds, const py::handle& repeat) {
        std::vector<NamedTensor> in = parse_feeds(feeds, nullptr);
        const long long n = as_int(repeat, "repeat", 1, 1LL << 30);
        std::string failure;
        double seconds = 0;
        {
          py::gil_scoped_release nogil;
          const auto t0 = std::chrono::steady_clock::now();
          for (long long i = 0; i < n && failure.empty(); ++i) {
            auto r = self.session->run(in);
            if (!r.ok()) failure = r.error().to_string();
          }
          seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        if (!failure.empty()) raise_invalid(failure);
        std::vector<NamedTensor>().swap(in);
        return seconds / static_cast<double>(n);
      },
      py::arg("session"), py::arg("feeds"), py::arg("repeat"),
      "Benchmark helper: seconds per Session::run through the C++ API alone (no Python in the loop).");
}

}  // namespace glassbox::py_binding
