#include "server/repository/loaded_model.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "diag/explain.h"
#include "server/codec/oip_codec.h"
#include "server/repository/warmup.h"

namespace glassbox::server {
namespace {

OipSpec to_oip(const TensorSpec& s) {
  OipSpec o{s.name, oip_datatype_name(s.dtype), {}};
  if (s.has_shape) o.shape = s.dims;  // -1 already marks symbolic dims
  return o;
}

nlohmann::ordered_json explain_json(const Session& session, const Pipeline* pipeline) {
  diag::EffectiveOptions opts;
  opts.session = session.options();
  auto rows = diag::explain_options(opts);
  auto process = diag::explain_process_options();  // the serving process's heap policy
  rows.insert(rows.end(), process.begin(), process.end());
  auto j = diag::explain_to_json(rows);
  if (pipeline) {
    j["pipeline"] = nlohmann::ordered_json::array();
    for (const auto& d : pipeline->derivations())
      j["pipeline"].push_back({{"field", d.field}, {"value", d.value}, {"source", d.source}});
  }
  return j;
}

Status warm_up(const LoadedModel& m, const WarmupPlan& plan) {
  if (m.pipeline) {
    if (m.is_classifier()) return m.pipeline->classify(plan.texts).status();
    return m.pipeline->embed(plan.texts).status();
  }
  return m.session->run(plan.feeds).status();
}

// Plans and runs the warm-up; records the plan and outcome in m.warmup and m.explain["warmup"].
// The error returned means the model must not serve.
Status run_warmup(LoadedModel& m, const ServerOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto declared = find_warmup_declaration(options, m.name, m.dir);
  if (!declared.ok()) return std::move(declared).take_error();
  auto plan = m.pipeline ? plan_text_warmup(*declared)
                         : plan_tensor_warmup(m.session->inputs(), *declared, m.dir, warmup_rules(options));
  const bool declared_plan = !declared->value.is_null();
  Status ran = plan.ok() ? warm_up(m, *plan) : Status(plan.error());
  m.warmup = plan.ok() ? plan->to_json() : nlohmann::ordered_json{{"source", declared_plan ? declared->source : "derived"},
                                                                   {"declared", declared_plan}};
  m.warmup["ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  m.warmup["policy"] = options.warmup_failure;
  if (ran.ok()) {
    m.warmup["outcome"] = "done";
  } else {
    const std::string shapes = plan.ok() ? " (" + plan->summary() + ")" : "";
    Error e = ran.error();
    e.what = std::string("warm-up run failed under ") + (declared_plan ? "declared" : "derived") + " shapes" + shapes + ": " + e.what;
    if (!declared_plan && e.fix.empty())
      e.fix = "declare the warm-up in the model's glassbox.json or server.model_warmup (docs/serving.md, \"Warm-up\")";
    if (declared_plan || options.warmup_failure != "ready") return e;
    m.warmup_error = e.to_string();
    m.warmup["outcome"] = "failed: ready without warm-up (warmup_failure=ready)";
    m.warmup["error"] = m.warmup_error;
  }
  m.explain["warmup"] = m.warmup;
  return {};
}

void describe_text_model(LoadedModel& m) {
  m.inputs = {{"text", "BYTES", {-1}}, {"text_pair", "BYTES", {-1}}};
  if (m.is_classifier()) {
    const int64_t c = static_cast<int64_t>(m.pipeline->decisions().labels.size());
    m.outputs = {{"logits", "FP32", {-1, c}}, {"label", "BYTES", {-1}}, {"score", "FP32", {-1}}};
  } else {
    int64_t hidden = -1;
    for (const auto& o : m.pipeline->session().outputs())
      if (o.has_shape && !o.dims.empty() && o.dims.back() > 0) hidden = o.dims.back();
    m.outputs = {{"embedding", "FP32", {-1, hidden}}};
  }
}

// Error texts reach clients: the model directory's path (as given and canonical) is
// replaced by the model's name, so no internal path leaves the server.
Error scrubbed(const Error& e, const std::string& dir, const std::string& where) {
  std::vector<std::string> paths = {dir};
  std::error_code ec;
  const auto canon = std::filesystem::weakly_canonical(dir, ec);
  if (!ec) paths.push_back(canon.string());
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  auto scrub = [&](std::string s) {
    for (const auto& p : paths) {
      if (p.empty()) continue;
      for (size_t at = s.find(p); at != std::string::npos; at = s.find(p, at)) s.replace(at, p.size(), "<model>");
    }
    return s;
  };
  return make_error(e.code, scrub(e.what), scrub(where), scrub(e.fix));
}

}  // namespace

std::string client_message(const Error& e, const LoadedModel& m) {
  Error s = scrubbed(e, m.dir, e.where);
  return s.to_string();
}

Result<std::shared_ptr<const LoadedModel>> load_model_version(const std::string& name, const std::string& version,
                                                              const std::string& dir, const PipelineOptions& engine,
                                                              const ServerOptions& options) {
  const std::string where = "model '" + name + "' version " + version;
  auto m = std::make_shared<LoadedModel>();
  m->name = name;
  m->version = version;
  std::error_code ec;
  const bool text = std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json", ec);
  if (text) {
    auto p = Pipeline::load(dir, engine);
    if (!p.ok()) return scrubbed(p.error(), dir, where);
    m->kind = ModelKind::kText;
    m->pipeline.emplace(std::move(p).value());
    describe_text_model(*m);
  } else {
    SessionOptions session = engine.session;
    if (engine.precision) session.precision = *engine.precision;
    auto file = find_model_file(dir);  // model.onnx, onnx/model.onnx or glassbox.json "model_file"
    if (!file.ok()) return scrubbed(file.error(), dir, where);
    auto s = Session::load(file->path, session);
    if (!s.ok()) return scrubbed(s.error(), dir, where);
    // OIP v2 carries tensors: a sequence-of-maps output (ZipMap) is refused with the alternative (docs/ml.md).
    for (const auto& o : s->outputs())
      if (o.type != ValueType::kTensor)
        return scrubbed(make_error(ErrorCode::kUnsupported,
                                   "output '" + o.name + "' is a " + o.type_note +
                                       "; the OIP v2 protocol carries tensors only, so this model cannot be served",
                                   file->relative,
                                   "export the model without ZipMap (skl2onnx: options={'zipmap': False}; the probabilities "
                                   "tensor before ZipMap holds the same numbers), or read the maps with `glassbox run`"),
                        dir, where);
    m->kind = ModelKind::kTensor;
    m->session.emplace(std::move(s).value());
    for (const auto& i : m->session->inputs()) m->inputs.push_back(to_oip(i));
    for (const auto& o : m->session->outputs()) m->outputs.push_back(to_oip(o));
  }
  m->dir = dir;
  m->explain = explain_json(m->engine(), m->pipeline ? &*m->pipeline : nullptr);
  if (Status st = run_warmup(*m, options); !st.ok()) return scrubbed(st.error(), dir, where);
  if (!m->warmup_error.empty()) {  // what the index and explain show: no path of the server's
    m->warmup_error = scrubbed(make_error(ErrorCode::kInternal, m->warmup_error), dir, where).what;
    m->warmup["error"] = m->warmup_error;
    m->explain["warmup"] = m->warmup;
  }
  return std::shared_ptr<const LoadedModel>(std::move(m));
}

}  // namespace glassbox::server
