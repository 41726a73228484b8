// glassbox._Pipeline: glassbox::Pipeline (model directory -> decisions -> tokenizer -> session)
// with the GIL released while it tokenizes and runs. python/glassbox/_pipeline.py shapes
// the results like transformers.pipeline().
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

#include "common.h"
#include "diag/explain.h"
#include "glassbox/embedding_heads.h"
#include "glassbox/memory_budget.h"
#include "glassbox/pipeline.h"

namespace glassbox::py_binding {
namespace {

struct PyPipeline {
  std::shared_ptr<const Pipeline> pipeline;
  std::string model_dir;
  std::map<std::string, std::string> sources;  // explain(): options given as arguments
  std::optional<pipeline::MemoryEstimate> memory;  // under max_memory: the estimate checked at load
};

py::array_t<float> rows_array(const Embedding& e) {  // float32 [rows, dim]
  const py::ssize_t n = e.vectors, d = e.vectors > 0 ? static_cast<py::ssize_t>(e.vector.size()) / e.vectors : 0;
  py::array_t<float> m({n, d});
  std::copy(e.vector.begin(), e.vector.end(), m.mutable_data());
  return m;
}

py::tuple sparse_arrays(const Embedding& e) {  // (indices int64 [k], values float32 [k])
  py::array_t<int64_t> idx(static_cast<py::ssize_t>(e.indices.size()));
  py::array_t<float> val(static_cast<py::ssize_t>(e.vector.size()));
  for (size_t k = 0; k < e.indices.size(); ++k) {
    idx.mutable_at(k) = e.indices[k];
    val.mutable_at(k) = e.vector[k];
  }
  return py::make_tuple(idx, val);
}

// A model with glassbox.json "heads": one engine run per batch feeds every head; per text a dict
// {"dense": float32 [dim], "sparse": (indices, values), "multi_vector": float32 [rows, dim]} of the declared heads.
py::tuple embed_heads_py(const Pipeline& pipeline, const std::vector<PipelineInput>& in) {
  auto r = [&] {
    py::gil_scoped_release nogil;
    return embed_heads(pipeline, in);
  }();
  py::list rows, tokens, dropped;
  for (const auto& h : unwrap(std::move(r))) {
    py::dict d;
    if (h.dense) d["dense"] = py::array_t<float>(static_cast<py::ssize_t>(h.dense->vector.size()), h.dense->vector.data());
    if (h.sparse) d["sparse"] = sparse_arrays(*h.sparse);
    if (h.multi_vector) d["multi_vector"] = rows_array(*h.multi_vector);
    rows.append(d);
    tokens.append(h.tokens);
    dropped.append(h.tokens_dropped);
  }
  return py::make_tuple(rows, tokens, dropped);
}

std::vector<PipelineInput> parse_texts(const py::handle& texts) {
  if (texts.is_none() || PyUnicode_Check(texts.ptr()) || !PySequence_Check(texts.ptr()))
    raise_invalid("texts must be a list, got " + type_name(texts));
  std::vector<PipelineInput> out;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(texts)) {
    const std::string what = "input " + std::to_string(i++);
    if (PyUnicode_Check(h.ptr())) {
      out.push_back({as_utf8(h, what), std::nullopt});
    } else if (PyDict_Check(h.ptr()) && h.contains("text")) {
      py::dict d = py::reinterpret_borrow<py::dict>(h);
      PipelineInput in{as_utf8(d["text"], what + " 'text'"), std::nullopt};
      if (d.contains("text_pair") && !d["text_pair"].is_none()) in.pair = as_utf8(d["text_pair"], what + " 'text_pair'");
      out.push_back(std::move(in));
    } else {
      raise_invalid(what + " must be a str or a dict {'text': str, 'text_pair': str}, got " + type_name(h));
    }
  }
  return out;
}

}  // namespace

void bind_pipeline(py::module_& m) {
  py::class_<PyPipeline>(m, "_Pipeline", "glassbox::Pipeline; use glassbox.pipeline().")
      .def(py::init([](const py::handle& model_dir, const py::handle& threads, const py::handle& opt_level,
                       const py::handle& truncation, const py::handle& batch_size, const py::handle& precision,
                       const py::handle& weights_cache, const py::handle& max_memory) {
             const std::string dir = as_path(model_dir, "model_dir");
             PipelineOptions o;
             o.session.threads = static_cast<int>(as_int(threads, "threads", 0, 4096));
             o.session.opt_level = static_cast<int>(as_int(opt_level, "opt_level", 0, 2));
             if (!truncation.is_none()) {
               std::string t = as_utf8(truncation, "truncation");
               if (t != "none" && t != "longest_first" && t != "only_first" && t != "only_second")
                 raise_invalid("truncation is '" + t + "'", "pipeline",
                               "use None (glassbox.json's), 'none', 'longest_first', 'only_first' or 'only_second'");
               o.truncation = std::move(t);
             }
             if (!batch_size.is_none()) o.batch_size = as_int(batch_size, "batch_size", 1, 1 << 20);
             if (!precision.is_none()) {  // as --precision: over glassbox.json's
               auto p = parse_precision(as_utf8(precision, "precision"));
               if (!p.ok()) raise_error(std::move(p).take_error().with_where("pipeline"));
               o.precision = *p;
               o.precision_source = "argument precision";
             }
             if (!weights_cache.is_none()) {  // as --weights-cache: over glassbox.json's
               o.weights_cache = as_path(weights_cache, "weights_cache");
               if (o.weights_cache->empty()) raise_invalid("weights_cache must be a directory path or None, got ''");
               o.weights_cache_source = "argument weights_cache";
             }
             // docs/memory.md: argument max_memory > glassbox.json "max_memory" > off; with a budget the largest declared
             // shape (batch_size x max_length) is dry-run and a model that does not fit raises LimitExceeded.
             const int64_t budget = as_budget(max_memory, "pipeline");
             auto r = [&] {
               py::gil_scoped_release nogil;
               return pipeline::load_with_budget(dir, o, budget, false, std::nullopt, "argument max_memory");
             }();
             auto loaded = unwrap(std::move(r));
             auto sources = argument_sources(o.session);
             if (budget > 0) sources["session.max_memory"] = "argument";
             return PyPipeline{std::make_shared<const Pipeline>(std::move(loaded.pipeline)), dir, sources, loaded.estimate};
           }),
           py::arg("model_dir"), py::arg("threads"), py::arg("opt_level"), py::arg("truncation"), py::arg("batch_size"),
           py::arg("precision") = py::none(), py::arg("weights_cache") = py::none(), py::arg("max_memory") = py::none())
      .def("memory_report",
           [](const PyPipeline& p) -> py::object {
             if (!p.memory) return py::none();
             const auto& e = *p.memory;
             py::dict d;
             d["batch"] = e.batch, d["tokens"] = e.tokens, d["process"] = e.baseline, d["tokenizer"] = e.tokenizer;
             d["weights"] = e.weights, d["first_run"] = e.first_run, d["arena"] = e.arena_counted;
             d["total"] = e.total(), d["budget"] = e.budget, d["run_limit"] = e.run_limit;
             return d;
           },
           "The memory estimate checked at load under a budget (docs/memory.md), in bytes; None without one.")
      .def_property_readonly("task", [](const PyPipeline& p) {
        return p.pipeline->decisions().task == PipelineTask::kClassify ? "classify" : "embed";
      })
      .def_property_readonly("labels", [](const PyPipeline& p) { return p.pipeline->decisions().labels; })
      .def_property_readonly("model_dir", [](const PyPipeline& p) { return p.model_dir; })
      .def("classify",
           [](const PyPipeline& self, const py::handle& texts, const py::handle& top_k) {
             std::vector<PipelineInput> in = parse_texts(texts);
             const int k = static_cast<int>(as_int(top_k, "top_k", 1, 1 << 20));
             auto r = [&] {
               py::gil_scoped_release nogil;
               return self.pipeline->classify(in, k);
             }();
             py::list out;
             for (const auto& c : unwrap(std::move(r))) {
               py::list labels;
               for (const auto& l : c.labels) {
                 py::dict d;
                 d["label"] = l.label;
                 d["score"] = l.score;
                 labels.append(d);
               }
               // abstained: None unless the model declares abstain_below (glassbox.json).
               py::object abstained = self.pipeline->decisions().abstain_below ? py::object(py::bool_(c.abstained)) : py::none();
               out.append(py::make_tuple(labels, c.tokens, c.tokens_dropped, abstained));
             }
             return out;
           })
      .def_property_readonly("output", [](const PyPipeline& p) {
        if (embedding_heads(*p.pipeline)) return "heads";
        return p.pipeline->decisions().sparse ? "sparse" : p.pipeline->decisions().multi_vector ? "multi_vector" : "dense";
      })
      .def("embed",
           [](const PyPipeline& self, const py::handle& texts, const py::handle& prompt_name, const py::handle& dimensions,
              bool query) -> py::tuple {
             std::vector<PipelineInput> in = parse_texts(texts);
             for (auto& t : in) t.query = query;  // multi-vector models only (others refuse it by name)
             EmbedOptions options;
             if (!dimensions.is_none()) options.dimensions = as_int(dimensions, "dimensions", 1, 1 << 30);
             if (!prompt_name.is_none())
               for (auto& t : in) t.prompt_name = as_utf8(prompt_name, "prompt_name");
             if (embedding_heads(*self.pipeline)) {
               if (options.dimensions)
                 raise_invalid("dimensions: this model declares heads (glassbox.json); each head is given as declared");
               return embed_heads_py(*self.pipeline, in);
             }
             auto r = [&] {
               py::gil_scoped_release nogil;
               return self.pipeline->embed(in, options);
             }();
             std::vector<Embedding> embs = unwrap(std::move(r));
             if (self.pipeline->decisions().sparse) {  // one (indices int64 [k], values float32 [k]) per text
               py::list rows, tokens, dropped;
               for (const auto& e : embs) {
                 rows.append(sparse_arrays(e));
                 tokens.append(e.tokens);
                 dropped.append(e.tokens_dropped);
               }
               return py::make_tuple(rows, tokens, dropped);
             }
             if (self.pipeline->decisions().multi_vector) {  // one float32 [kept tokens, dim] per text
               py::list rows, tokens, dropped;
               for (const auto& e : embs) {
                 rows.append(rows_array(e));
                 tokens.append(e.tokens);
                 dropped.append(e.tokens_dropped);
               }
               return py::make_tuple(rows, tokens, dropped);
             }
             const size_t dim = embs.empty() ? 0 : embs[0].vector.size();
             for (const auto& e : embs)
               if (e.vector.size() != dim)
                 raise_error(make_error(ErrorCode::kInternal, "embeddings of one batch differ in size", self.model_dir));
             py::array_t<float> vectors({static_cast<py::ssize_t>(embs.size()), static_cast<py::ssize_t>(dim)});
             auto w = vectors.mutable_unchecked<2>();
             py::list tokens, dropped;
             for (size_t i = 0; i < embs.size(); ++i) {
               for (size_t k = 0; k < dim; ++k) w(i, k) = embs[i].vector[k];
               tokens.append(embs[i].tokens);
               dropped.append(embs[i].tokens_dropped);
             }
             return py::make_tuple(vectors, tokens, dropped);
           },
           py::arg("texts"), py::arg("prompt_name") = py::none(), py::arg("dimensions") = py::none(), py::arg("query") = false)
      .def_property_readonly("similarity_function",
                             [](const PyPipeline& self) { return self.pipeline->decisions().similarity; })
      .def("similarity",
           [](const PyPipeline& self, const py::handle& a, const py::handle& b) {
             auto vec = [](const py::handle& h) {
               auto arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(h);
               if (!arr || arr.ndim() != 1) raise_invalid("similarity takes two 1-D float vectors");
               return std::vector<float>(arr.data(), arr.data() + arr.size());
             };
             return unwrap(vector_similarity(self.pipeline->decisions().similarity, vec(a), vec(b)));
           })
      .def("rerank",
           [](const PyPipeline& self, const py::handle& query, const py::handle& documents, const py::handle& top_n,
              const py::handle& raw_scores, const py::handle& overflow) {
             const std::string q = as_utf8(query, "query");
             std::vector<std::string> docs;
             for (auto& in : parse_texts(documents)) docs.push_back(std::move(in.text));
             RerankOptions options;
             if (!top_n.is_none()) options.top_n = static_cast<size_t>(as_int(top_n, "top_n", 1, 1 << 30));
             options.raw_scores = raw_scores.cast<bool>();
             if (!overflow.is_none()) {
               const std::string o = as_utf8(overflow, "overflow");
               if (o != "error" && o != "truncate" && o != "split")
                 raise_invalid("overflow must be 'error', 'truncate' or 'split', got '" + o + "'");
               options.truncate = o == "truncate";
               options.split = o == "split";
             }
             auto r = [&] {
               py::gil_scoped_release nogil;
               return rerank(*self.pipeline, q, docs, options);
             }();
             py::list out;
             for (const auto& d : unwrap(std::move(r))) {
               py::dict e;
               e["index"] = d.index;
               e["score"] = d.score;
               e["logit"] = d.logit;
               e["text"] = docs[d.index];
               e["tokens"] = d.tokens;
               e["tokens_dropped"] = d.tokens_dropped;
               e["windows"] = d.windows;
               out.append(e);
             }
             return out;
           })
      .def("explain", [](const PyPipeline& self) {
        diag::EffectiveOptions eo;
        eo.session = self.pipeline->session().options();
        eo.sources = self.sources;
        nlohmann::ordered_json j = diag::explain_to_json(diag::explain_options(eo));
        j["pipeline"] = nlohmann::json::array();
        for (const auto& d : self.pipeline->derivations()) {
          j["pipeline"].push_back({{"field", d.field}, {"value", d.value}, {"source", d.source}});
          if (!d.risk.empty()) j["pipeline"].back()["risk"] = d.risk;  // as `glassbox explain --json`
        }
        j["cpu"] = diag::cpu_report_to_json(cpu_report());  // as `glassbox explain --json`
        return json_to_python(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      });

  m.def(
      "_bench_cpp_pipeline",
      [](const PyPipeline& self, const py::handle& texts, const py::handle& repeat) {
        std::vector<PipelineInput> in = parse_texts(texts);
        const long long n = as_int(repeat, "repeat", 1, 1LL << 30);
        const bool classify = self.pipeline->decisions().task == PipelineTask::kClassify;
        std::string failure;
        double seconds = 0;
        {
          py::gil_scoped_release nogil;
          const auto t0 = std::chrono::steady_clock::now();
          for (long long i = 0; i < n && failure.empty(); ++i) {
            Status s = classify ? self.pipeline->classify(in, 1).status() : self.pipeline->embed(in).status();
            if (!s.ok()) failure = s.to_string();
          }
          seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        if (!failure.empty()) raise_invalid(failure);
        return seconds / static_cast<double>(n);
      },
      py::arg("pipeline"), py::arg("texts"), py::arg("repeat"),
      "Benchmark helper: seconds per Pipeline::classify / embed through the C++ API alone.");
}

}  // namespace glassbox::py_binding
