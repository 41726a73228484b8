#include "server/repository/loaded_model.h"

#include <algorithm>
#include <filesystem>

#include "diag/explain.h"
#include "server/codec/oip_codec.h"

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

Result<std::vector<NamedTensor>> warm_up_inputs(const Session& s) {
  std::vector<NamedTensor> feeds;
  for (const auto& in : s.inputs()) {
    if (in.type != ValueType::kTensor || !in.has_shape)
      return make_error(ErrorCode::kUnsupported, "input '" + in.name + "' has no tensor shape to warm up with", "warm-up");
    Shape shape;
    for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : d);  // symbolic dims: 1 (zeros are valid ids and values)
    if (in.dtype == DataType::kString) {  // empty strings: an unknown category, valid input for every string op
      GB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
      GB_ASSIGN_OR_RETURN(Tensor s, Tensor::strings(shape, std::vector<std::string>(static_cast<size_t>(n))));
      feeds.push_back({in.name, std::move(s)});
      continue;
    }
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(in.dtype, shape));
    feeds.push_back({in.name, std::move(t)});
  }
  return feeds;
}

Status warm_up(const LoadedModel& m) {
  if (m.pipeline) {
    const std::vector<PipelineInput> text = {{"glassbox warm-up", std::nullopt}};
    if (m.is_classifier()) return m.pipeline->classify(text).status();
    return m.pipeline->embed(text).status();
  }
  GB_ASSIGN_OR_RETURN(auto feeds, warm_up_inputs(*m.session));
  return m.session->run(feeds).status();
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
                                                              const std::string& dir, const PipelineOptions& engine) {
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
    auto s = Session::load((std::filesystem::path(dir) / "model.onnx").string(), session);
    if (!s.ok()) return scrubbed(s.error(), dir, where);
    // OIP v2 carries tensors: a sequence-of-maps output (ZipMap) is refused with the alternative (docs/ml.md).
    for (const auto& o : s->outputs())
      if (o.type != ValueType::kTensor)
        return scrubbed(make_error(ErrorCode::kUnsupported,
                                   "output '" + o.name + "' is a " + o.type_note +
                                       "; the OIP v2 protocol carries tensors only, so this model cannot be served",
                                   "model.onnx",
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
  if (Status st = warm_up(*m); !st.ok()) {
    Error e = scrubbed(st.error(), dir, where);
    e.what = "warm-up run failed: " + e.what;
    return e;
  }
  return std::shared_ptr<const LoadedModel>(std::move(m));
}

}  // namespace glassbox::server
