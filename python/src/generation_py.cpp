// glassbox.GenerationSession: glassbox::GenerationSession (prefill/step over a decoder model directory)
// with the GIL released while the engine runs, and chat rendering through the model's own template
// (include/glassbox/chat_prompt.h, the rule `glassbox generate --chat` uses). python/glassbox/_pipeline.py
// builds pipeline("text-generation") on it.
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <set>

#include "common.h"
#include "glassbox/generation_json.h"
#include "glassbox/chat_prompt.h"
#include "glassbox/generation.h"

namespace glassbox::py_binding {
namespace {

struct PyGeneration {
  std::unique_ptr<GenerationSession> session;
  std::string model_dir;
  std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();  // one engine call at a time
  std::optional<ChatTemplate> chat_template;                        // loaded at the first chat render
  std::set<SequenceId> chat_sequences;                              // their results say add_special_tokens false
};

// Runs f on the session with the GIL released and the session's lock held (a GenerationSession is
// not thread-safe; Python threads sharing one are serialized here).
template <class F>
auto locked(PyGeneration& g, F&& f) {
  py::gil_scoped_release nogil;
  std::lock_guard<std::mutex> lock(*g.mu);
  return f();
}

py::object to_python(const nlohmann::ordered_json& j) {
  return json_to_python(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

double as_float(const py::handle& h, const std::string& what) {
  if (PyBool_Check(h.ptr()) || !(PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr())))
    raise_invalid(what + " must be a number, got " + type_name(h));
  return h.cast<double>();
}

std::vector<std::string> as_strings(const py::handle& h, const std::string& what) {
  if (PyUnicode_Check(h.ptr())) return {as_utf8(h, what)};
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) raise_invalid(what + " must be a str or a list of str, got " + type_name(h));
  std::vector<std::string> out;
  for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) out.push_back(as_utf8(x, what + " item"));
  return out;
}

std::vector<uint32_t> as_ids(const py::handle& h, const std::string& what) {
  if (!PyList_Check(h.ptr()) && !PyTuple_Check(h.ptr())) raise_invalid(what + " must be a list of int, got " + type_name(h));
  std::vector<uint32_t> out;
  for (py::handle x : py::reinterpret_borrow<py::sequence>(h))
    out.push_back(static_cast<uint32_t>(as_int(x, what + " item", 0, UINT32_MAX)));
  return out;
}

const char* const kRequestKeys =
    "max_new_tokens, do_sample, temperature, top_k, top_p, min_p, repetition_penalty, seed, stop, stop_token_ids, "
    "skip_special_tokens";

// Keyword arguments -> GenerationRequest (None = unset: the model's files, else glassbox's default).
GenerationRequest parse_request(const py::dict& kw) {
  GenerationRequest r;
  r.source = "argument";
  for (auto [k, v] : kw) {
    const std::string key = as_utf8(k, "argument name");
    if (v.is_none()) continue;
    if (key == "max_new_tokens") r.max_new_tokens = as_int(v, key, 0, INT32_MAX);
    else if (key == "do_sample") r.do_sample = as_bool(v, key);
    else if (key == "temperature") r.temperature = as_float(v, key);
    else if (key == "top_k") r.top_k = as_int(v, key, 0, INT32_MAX);
    else if (key == "top_p") r.top_p = as_float(v, key);
    else if (key == "min_p") r.min_p = as_float(v, key);
    else if (key == "repetition_penalty") r.repetition_penalty = as_float(v, key);
    else if (key == "seed") r.seed = static_cast<uint64_t>(as_int(v, key, 0, INT64_MAX));
    else if (key == "stop") r.stop_strings = as_strings(v, key);
    else if (key == "stop_token_ids") r.stop_token_ids = as_ids(v, key);
    else if (key == "skip_special_tokens") r.skip_special_tokens = as_bool(v, key);
    else raise_invalid("unknown generation argument '" + key + "'", {}, std::string("use one of: ") + kRequestKeys);
  }
  return r;
}

// One input: a str (tokenized per the policy), or {"prompt_ids": [...], "chat": bool} (used as given).
SequenceInput parse_input(const py::handle& h, const GenerationRequest& req, size_t i, bool* chat) {
  const std::string what = "input " + std::to_string(i);
  *chat = false;
  if (PyUnicode_Check(h.ptr())) return SequenceInput{as_utf8(h, what), std::nullopt, req};
  if (PyDict_Check(h.ptr()) && h.contains("prompt_ids")) {
    py::dict d = py::reinterpret_borrow<py::dict>(h);
    if (d.contains("chat")) *chat = as_bool(d["chat"], what + " 'chat'");
    return SequenceInput{{}, as_ids(d["prompt_ids"], what + " 'prompt_ids'"), req};
  }
  raise_invalid(what + " must be a str or a dict {'prompt_ids': [int, ...]}, got " + type_name(h));
}

py::dict event_dict(const StepEvent& e) {
  py::dict d;
  d["id"] = e.id;
  d["token"] = e.token ? py::object(py::int_(*e.token)) : py::object(py::none());
  d["text"] = py::str(e.text);  // always whole characters (held bytes wait for the next token)
  d["finish_reason"] = e.finished == FinishReason::kNone ? py::object(py::none()) : py::object(py::str(finish_reason_name(e.finished)));
  return d;
}

py::list events_list(const std::vector<StepEvent>& events) {
  py::list out;
  for (const auto& e : events) out.append(event_dict(e));
  return out;
}

py::object result_dict(PyGeneration& g, SequenceId id) {
  auto r = unwrap(locked(g, [&] { return g.session->take_result(id); }));
  if (g.chat_sequences.erase(id)) mark_chat_prompt(r.policy);
  auto j = generation::result_json(r, g.session->decoder());
  j["prompt_ids"] = r.prompt_ids;
  return to_python(j);
}

PyGeneration load(const py::handle& model_dir, const py::handle& threads, const py::handle& precision,
                  const py::handle& max_context, const py::handle& kv_budget_bytes) {
  PyGeneration g;
  g.model_dir = as_path(model_dir, "model_dir");
  GenerationOptions o;
  o.session.threads = static_cast<int>(as_int(threads, "threads", 0, 4096));
  if (!precision.is_none()) {
    auto p = parse_precision(as_utf8(precision, "precision"));
    if (!p.ok()) raise_error(std::move(p).take_error().with_where("GenerationSession"));
    o.precision = *p;
  }
  if (!max_context.is_none()) o.max_context = as_int(max_context, "max_context", 1, INT32_MAX);
  o.max_context_source = "argument max_context";
  if (!kv_budget_bytes.is_none()) o.kv_budget_bytes = as_int(kv_budget_bytes, "kv_budget_bytes", 0, INT64_MAX);
  auto r = [&] {
    py::gil_scoped_release nogil;
    return GenerationSession::load(g.model_dir, o);
  }();
  g.session = std::make_unique<GenerationSession>(unwrap(std::move(r)));
  return g;
}

py::object render_chat(PyGeneration& g, const py::handle& messages_json, const py::handle& add_generation_prompt,
                       const py::handle& continue_final_message) {
  if (!g.chat_template) g.chat_template.emplace(unwrap(ChatTemplate::from_model_dir(g.model_dir)));
  ChatPromptRequest req;
  req.messages_json = as_utf8(messages_json, "messages");
  if (!add_generation_prompt.is_none()) req.add_generation_prompt = as_bool(add_generation_prompt, "add_generation_prompt");
  if (!continue_final_message.is_none())
    req.continue_final_message = as_bool(continue_final_message, "continue_final_message");
  req.source = "argument";
  auto p = unwrap(render_chat(*g.chat_template, g.session->tokenizer(), req));
  return to_python(generation::chat_json(p));
}

py::tuple prefill(PyGeneration& g, const py::handle& inputs, const py::dict& kw) {
  if (!PyList_Check(inputs.ptr()) && !PyTuple_Check(inputs.ptr()))
    raise_invalid("inputs must be a list, got " + type_name(inputs));
  const GenerationRequest req = parse_request(kw);
  std::vector<SequenceInput> in;
  std::vector<bool> chat;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(inputs)) {
    bool c = false;
    in.push_back(parse_input(h, req, i++, &c));
    chat.push_back(c);
  }
  std::vector<StepEvent> events;
  auto ids = locked(g, [&] { return g.session->prefill(in, &events); });
  auto admitted = unwrap(std::move(ids));
  for (size_t k = 0; k < admitted.size(); ++k)
    if (chat[k]) g.chat_sequences.insert(admitted[k]);
  return py::make_tuple(py::cast(admitted), events_list(events));
}

py::list step(PyGeneration& g, const py::handle& ids) {
  std::vector<SequenceId> which;
  if (!ids.is_none())
    for (uint32_t id : as_ids(ids, "ids")) which.push_back(id);
  auto r = locked(g, [&] { return g.session->step(which); });
  return events_list(unwrap(std::move(r)));
}

}  // namespace

void bind_generation(py::module_& m) {
  py::class_<PyGeneration>(m, "GenerationSession",
                           "A decoder model directory ready to generate (glassbox::GenerationSession): prefill() admits "
                           "prompts and runs them as one engine run, step() advances every active sequence by one token; "
                           "each result carries the policy with the source of every field. pipeline('text-generation') "
                           "is the simple surface over it.")
      .def(py::init(&load), py::arg("model_dir"), py::kw_only(), py::arg("threads") = 0, py::arg("precision") = py::none(),
           py::arg("max_context") = py::none(), py::arg("kv_budget_bytes") = py::none(),
           "Loads MODEL_DIR (model.onnx or onnx/model.onnx, tokenizer.json, config.json, optional "
           "generation_config.json, tokenizer_config.json, glassbox.json). threads=0: physical cores; precision None: "
           "glassbox.json's, else fp32; max_context None: glassbox.json's, else config.json max_position_embeddings; "
           "kv_budget_bytes None: 2 GiB for the KV caches of all sequences in flight.")
      .def_property_readonly("model_dir", [](const PyGeneration& g) { return g.model_dir; }, "The model directory.")
      .def("explain", [](const PyGeneration& g) { return to_python(generation::explain_json(*g.session)); },
           "As `glassbox generate --explain`: decoder, KV memory, the default policy with sources, glassbox's "
           "defaults with reason and risk, load warnings.")
      .def("resolve", [](const PyGeneration& g, const py::kwargs& kw) {
             return to_python(generation::policy_json(unwrap(g.session->resolve(parse_request(kw)))));
           },
           "The policy a request with these arguments gets: {field: {value, source}}.")
      .def("render_chat", &render_chat, py::arg("messages_json"), py::arg("add_generation_prompt") = py::none(),
           py::arg("continue_final_message") = py::none(),
           "A JSON messages array rendered by the model's own chat template and tokenized without adding special "
           "tokens: {template_source, template_name, add_generation_prompt, continue_final_message, prompt, prompt_ids}.")
      .def("prefill", [](PyGeneration& g, const py::handle& inputs, const py::kwargs& kw) { return prefill(g, inputs, kw); },
           py::arg("inputs"),
           "Admits prompts (each a str, or {'prompt_ids': [...]}) with the generation arguments as keywords (all or "
           "none admitted) and runs them as one engine run: (sequence ids, events); an event is {id, token, text, "
           "finish_reason}, text being whole characters only.")
      .def("step", &step, py::arg("ids") = py::none(),
           "One token for each of `ids` (None: every active sequence) in one engine run: the events.")
      .def("active", [](PyGeneration& g) { return locked(g, [&] { return g.session->active(); }); },
           "Ids of the sequences not finished.")
      .def("take_result", [](PyGeneration& g, int64_t id) { return result_dict(g, id); }, py::arg("id"),
           "The result of a finished sequence (removed, its KV freed), as `glassbox generate --json` prints it, plus "
           "prompt_ids.")
      .def("cancel", [](PyGeneration& g, int64_t id) {
             g.chat_sequences.erase(id);
             locked(g, [&] {
               g.session->cancel(id);
               return 0;
             });
           }, py::arg("id"), "Ends a sequence now and frees it.");
}

}  // namespace glassbox::py_binding
