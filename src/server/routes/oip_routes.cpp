// Open Inference Protocol (KServe v2) REST: server and model metadata, health, readiness,
// infer (tensor models, text models through a BYTES input named "text" (a model with declared heads answers
// one set of output tensors per head, head_outputs.h), image and OCR models through
// a BYTES input named "image", generation models through "text_input" -> "text_output"), explain.
#include <algorithm>

#include "diag/explain.h"
#include "glassbox/embedding_heads.h"
#include "glassbox/version.h"
#include "server/codec/image_body.h"
#include "server/codec/oip_codec.h"
#include "server/repository/head_outputs.h"
#include "server/routes/image_routes.h"
#include "server/routes/oip_generate.h"
#include "server/routes/oip_infer.h"
#include "server/routes/router.h"

namespace glassbox::server {
namespace {

using ojson = nlohmann::ordered_json;

ojson specs_json(const std::vector<OipSpec>& specs) {
  ojson a = ojson::array();
  for (const auto& s : specs) a.push_back({{"name", s.name}, {"datatype", s.datatype}, {"shape", s.shape}});
  return a;
}

HttpResponse model_metadata(const LoadedModel& m) {
  ojson j;
  j["name"] = m.name;
  j["versions"] = {m.version};
  j["platform"] = "onnx_onnxv1";
  j["inputs"] = specs_json(m.inputs);
  j["outputs"] = specs_json(m.outputs);
  return json_response(200, j);
}

// Which outputs to send, in order, and whether each goes in the binary section.
Result<std::pair<std::vector<OipTensor>, std::vector<bool>>> select_outputs(std::vector<OipTensor> all, const InferRequest& req) {
  std::vector<bool> binary;
  if (req.outputs.empty()) {
    binary.assign(all.size(), req.binary_output_default);
    return std::make_pair(std::move(all), std::move(binary));
  }
  std::vector<OipTensor> picked;
  for (const auto& want : req.outputs) {
    auto it = std::find_if(all.begin(), all.end(), [&](const OipTensor& t) { return t.name == want.name; });
    if (it == all.end())
      return make_error(ErrorCode::kInvalidArgument, "the model has no output '" + want.name + "'", "outputs",
                        "GET /v2/models/{name} lists the outputs");
    picked.push_back(*it);
    binary.push_back(want.binary);
  }
  return std::make_pair(std::move(picked), std::move(binary));
}

// Selects the requested outputs and hands them to the front end's answer.
void answer(const Responder& respond, const InferAnswer& done, const LoadedModel& m, const InferRequest& req,
            std::vector<OipTensor> outs, const nlohmann::json& parameters, int64_t dropped) {
  auto picked = select_outputs(std::move(outs), req);
  if (!picked.ok()) return respond(error_response(picked.error(), nullptr));
  done(m, req, std::move(picked->first), std::move(picked->second), parameters, dropped);
}

// The REST answer: JSON, or JSON + the binary section.
void rest_answer(const Responder& respond, const LoadedModel& m, const InferRequest& req, std::vector<OipTensor> outs,
                 std::vector<bool> binary, const nlohmann::json& parameters, int64_t dropped) {
  auto r = encode_infer_response(m.name, m.version, req.id, parameters, outs, binary);
  if (!r.ok()) return respond(error_response(r.error(), nullptr));
  add_truncation_header(*r, dropped);
  if (auto p = parameters.find("policy"); m.kind == ModelKind::kGeneration && p != parameters.end() && p->is_string())
    r->headers.emplace_back("X-Glassbox-Policy", p->get<std::string>());  // the effective generation policy
  respond(std::move(r).value());
}

Status check_outputs_exist(const LoadedModel& m, const InferRequest& req) {
  for (const auto& o : req.outputs) {
    const bool known = std::any_of(m.outputs.begin(), m.outputs.end(), [&](const OipSpec& s) { return s.name == o.name; });
    if (!known)
      return make_error(ErrorCode::kInvalidArgument, "the model has no output '" + o.name + "'", "outputs",
                        "GET /v2/models/" + m.name + " lists the outputs");
  }
  return {};
}

// Text models: BYTES "text" [N] (optional "text_pair" [N]) -> logits/label/score or embedding.
Result<std::vector<PipelineInput>> text_inputs(const InferRequest& req, const ServerOptions& options) {
  const OipTensor* text = nullptr;
  const OipTensor* pair = nullptr;
  for (const auto& t : req.inputs) {
    if (t.name == "text") text = &t;
    else if (t.name == "text_pair") pair = &t;
    else
      return make_error(ErrorCode::kInvalidArgument, "text models take inputs 'text' and 'text_pair', not '" + t.name + "'",
                        "inputs");
  }
  if (!text) return make_error(ErrorCode::kInvalidArgument, "missing input 'text' (BYTES, shape [N])", "inputs");
  for (const OipTensor* t : {text, pair}) {
    if (!t) continue;
    if (t->datatype != "BYTES")
      return make_error(ErrorCode::kInvalidArgument, "input '" + t->name + "' is " + t->datatype + ", not BYTES", "inputs");
    const bool shape_ok = t->shape.size() == 1 || (t->shape.size() == 2 && t->shape[1] == 1);
    if (!shape_ok)
      return make_error(ErrorCode::kInvalidArgument, "input '" + t->name + "' has shape " + shape_to_string(t->shape) +
                                                         ", not [N] (or [N, 1])", "inputs");
  }
  if (pair && pair->bytes.size() != text->bytes.size())
    return make_error(ErrorCode::kInvalidArgument, "'text_pair' has " + std::to_string(pair->bytes.size()) +
                                                       " elements but 'text' has " + std::to_string(text->bytes.size()), "inputs");
  if (text->bytes.empty()) return make_error(ErrorCode::kInvalidArgument, "input 'text' has no elements", "inputs");
  if (static_cast<int64_t>(text->bytes.size()) > options.max_texts_per_request)
    return make_error(ErrorCode::kInvalidArgument,
                      std::to_string(text->bytes.size()) + " texts, over the server's max_texts_per_request (" +
                          std::to_string(options.max_texts_per_request) + ")", "inputs");
  bool truncate = false;
  if (auto it = req.parameters.find("truncate"); it != req.parameters.end()) {
    if (!it->is_boolean()) return make_error(ErrorCode::kInvalidArgument, "parameters.truncate must be true or false", "parameters");
    truncate = it->get<bool>();
  }
  std::vector<PipelineInput> out;
  for (size_t i = 0; i < text->bytes.size(); ++i) {
    if (!valid_utf8(text->bytes[i]) || (pair && !valid_utf8(pair->bytes[i])))
      return make_error(ErrorCode::kInvalidArgument, "text " + std::to_string(i) + " is not valid UTF-8", "inputs");
    PipelineInput in{text->bytes[i], std::nullopt, truncate};
    if (pair) in.pair = pair->bytes[i];
    out.push_back(std::move(in));
  }
  return out;
}

// Allocation of a small output cannot fail but for a bad shape, which these are not.
Tensor float_tensor(Shape shape) { return Tensor::allocate(DataType::kFloat32, std::move(shape)).value(); }

// Tensor outputs of classifications (text or image: each has logits in label order and its top label):
// logits [n, labels], label BYTES [n], score FP32 [n].
template <class Classes>
void add_classification_outputs(const Classes& classes, int64_t c, std::vector<OipTensor>& outs) {
  const int64_t n = static_cast<int64_t>(classes.size());
  OipTensor logits{"logits", "FP32", {n, c}, float_tensor({n, c}), {}};
  OipTensor label{"label", "BYTES", {n}, {}, {}};
  OipTensor score{"score", "FP32", {n}, float_tensor({n}), {}};
  for (int64_t i = 0; i < n; ++i) {
    const auto& cl = classes[i];
    std::copy(cl.logits.begin(), cl.logits.end(), logits.tensor.mutable_data<float>() + i * c);
    label.bytes.push_back(cl.labels.front().label);
    score.tensor.mutable_data<float>()[i] = cl.labels.front().score;
  }
  outs.push_back(std::move(logits));
  outs.push_back(std::move(label));
  outs.push_back(std::move(score));
}

std::vector<OipTensor> text_outputs(const LoadedModel& m, const TextResults& r, int64_t& dropped) {
  if (const EmbeddingHeads* heads = embedding_heads(*m.pipeline)) return head_output_tensors(*heads, r.heads, dropped);
  std::vector<OipTensor> outs;
  const int64_t n = static_cast<int64_t>(std::max(r.classes.size(), r.embeddings.size()));
  dropped = 0;
  if (m.is_classifier()) {
    add_classification_outputs(r.classes, static_cast<int64_t>(m.pipeline->decisions().labels.size()), outs);
    for (const auto& cl : r.classes) dropped += cl.tokens_dropped;
  } else if (m.is_sparse()) {
    int64_t nnz = 0;
    for (const auto& e : r.embeddings) nnz += static_cast<int64_t>(e.indices.size());
    OipTensor indices{"indices", "INT64", {nnz, 2}, Tensor::allocate(DataType::kInt64, {nnz, 2}).value(), {}};
    OipTensor values{"values", "FP32", {nnz}, float_tensor({nnz}), {}};
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto& e = r.embeddings[i];
      for (size_t k = 0; k < e.indices.size(); ++k, ++at) {
        indices.tensor.mutable_data<int64_t>()[2 * at] = i;
        indices.tensor.mutable_data<int64_t>()[2 * at + 1] = e.indices[k];
        values.tensor.mutable_data<float>()[at] = e.vector[k];
      }
      dropped += e.tokens_dropped;
    }
    outs.push_back(std::move(indices));
    outs.push_back(std::move(values));
  } else {
    const int64_t h = n ? static_cast<int64_t>(r.embeddings[0].vector.size()) : 0;
    OipTensor emb{"embedding", "FP32", {n, h}, float_tensor({n, h}), {}};
    for (int64_t i = 0; i < n; ++i) {
      std::copy(r.embeddings[i].vector.begin(), r.embeddings[i].vector.end(), emb.tensor.mutable_data<float>() + i * h);
      dropped += r.embeddings[i].tokens_dropped;
    }
    outs.push_back(std::move(emb));
  }
  return outs;
}

// A text over the limit: name the count and limit (pipeline message) and the request field.
HttpResponse text_error(const Error& e, const LoadedModel& m, const char* truncate_field) {
  if (e.code != ErrorCode::kLimitExceeded) return error_response(e, &m);
  Error x = e;
  x.fix = std::string("send ") + truncate_field + " to drop the tokens past the limit (the response reports how many), or shorten the text";
  return refuse(RefusalCode::kTooLarge, client_message(x, m), "inputs");
}

void infer_text(ServerContext& ctx, std::shared_ptr<const LoadedModel> m, InferRequest req, const Responder& respond,
                const HttpRequest& http, InferAnswer done) {
  if (m->pipeline->decisions().multi_vector)  // its outputs are ragged: a [tokens, dim] per text
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + m->name + "' gives one vector per token (a multi-vector ColBERT model): use POST /embed_multi",
                          "model"));
  auto inputs = text_inputs(req, ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  if (Status st = check_outputs_exist(*m, req); !st.ok()) return respond(error_response(st.error(), nullptr));
  std::optional<bool> normalize;
  if (auto it = req.parameters.find("normalize"); it != req.parameters.end() && it->is_boolean()) normalize = it->get<bool>();
  const EmbeddingHeads* heads = embedding_heads(*m->pipeline);
  if (heads && normalize)
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + m->name + "' gives its heads as glassbox.json \"heads\" declares them: parameters.normalize "
                          "applies to a one-vector embedder", "parameters"));
  TextJob job;
  job.task = m->pipeline->decisions().task;
  job.inputs = std::move(inputs).value();
  job.normalize = normalize;
  if (heads) job.heads = head_names(*heads);  // every declared head, each its own output tensors (head_outputs.h)
  auto shared_req = std::make_shared<InferRequest>(std::move(req));
  job.done = [respond, done = std::move(done), m, shared_req](Result<TextResults> r) {
    if (!r.ok()) return respond(text_error(r.error(), *m, "parameters.truncate: true"));
    int64_t dropped = 0;
    auto outs = text_outputs(*m, *r, dropped);
    nlohmann::json params = nlohmann::json::object();
    if (dropped > 0) params["tokens_dropped"] = dropped;
    answer(respond, done, *m, *shared_req, std::move(outs), params, dropped);
  };
  WorkItem item = make_work(ctx, m, std::move(job), http);
  submit_work(ctx, std::move(item), respond);
}

// Image and OCR models: one BYTES input "image" [N] (or [N, 1]); each element is the encoded image's
// bytes in the binary extension, base64 or a data URI in JSON (JSON strings must be UTF-8).
Result<std::vector<std::string>> image_inputs(InferRequest& req, const ServerOptions& options) {
  if (req.inputs.size() != 1 || req.inputs[0].name != "image")
    return make_error(ErrorCode::kInvalidArgument, "image models take one input 'image' (BYTES, shape [N])", "inputs");
  OipTensor& t = req.inputs[0];
  if (t.datatype != "BYTES") return make_error(ErrorCode::kInvalidArgument, "input 'image' is " + t.datatype + ", not BYTES", "inputs");
  if (!(t.shape.size() == 1 || (t.shape.size() == 2 && t.shape[1] == 1)))
    return make_error(ErrorCode::kInvalidArgument, "input 'image' has shape " + shape_to_string(t.shape) + ", not [N] (or [N, 1])", "inputs");
  if (t.bytes.empty()) return make_error(ErrorCode::kInvalidArgument, "input 'image' has no elements", "inputs");
  if (static_cast<int64_t>(t.bytes.size()) > options.max_texts_per_request)
    return make_error(ErrorCode::kLimitExceeded, std::to_string(t.bytes.size()) + " images, over the server's max_texts_per_request (" +
                                                     std::to_string(options.max_texts_per_request) + ")", "inputs");
  if (t.parameters.contains("binary_data_size")) return std::move(t.bytes);
  std::vector<std::string> out;
  for (size_t i = 0; i < t.bytes.size(); ++i) {
    GB_ASSIGN_OR_RETURN(auto b, image_bytes_from_text(t.bytes[i], "input 'image' element " + std::to_string(i)));
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<OipTensor> image_outputs(const LoadedModel& m, const ImageResults& r) {
  std::vector<OipTensor> outs;
  if (m.ocr) {
    const int64_t n = static_cast<int64_t>(r.ocr.size());
    OipTensor text{"text", "BYTES", {n}, {}, {}}, doc{"ocr", "BYTES", {n}, {}, {}};
    for (const auto& o : r.ocr) {
      std::string joined;
      for (const auto& l : o.lines) joined += (joined.empty() ? "" : "\n") + l.text;
      text.bytes.push_back(std::move(joined));
      doc.bytes.push_back(ocr_result_json(o).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    outs.push_back(std::move(text));
    outs.push_back(std::move(doc));
  } else if (m.image_embedder) {
    const int64_t n = static_cast<int64_t>(r.embeddings.size());
    const int64_t h = n ? static_cast<int64_t>(r.embeddings[0].vector.size()) : 0;
    OipTensor emb{"embedding", "FP32", {n, h}, float_tensor({n, h}), {}};
    for (int64_t i = 0; i < n; ++i) std::copy(r.embeddings[i].vector.begin(), r.embeddings[i].vector.end(), emb.tensor.mutable_data<float>() + i * h);
    outs.push_back(std::move(emb));
  } else {
    add_classification_outputs(r.classes, static_cast<int64_t>(m.image_classifier->labels().size()), outs);
  }
  return outs;
}

void infer_image(ServerContext& ctx, std::shared_ptr<const LoadedModel> m, InferRequest req, const Responder& respond,
                 const HttpRequest& http, InferAnswer done) {
  auto images = image_inputs(req, ctx.options);
  if (!images.ok()) return respond(error_response(images.error(), nullptr));
  if (Status st = check_outputs_exist(*m, req); !st.ok()) return respond(error_response(st.error(), nullptr));
  auto shared_req = std::make_shared<InferRequest>(std::move(req));
  submit_image_work(ctx, m, std::move(images).value(), 1, http, respond,
                    [respond, done = std::move(done), m, shared_req](Result<ImageResults> r) {
    if (!r.ok()) return respond(error_response(r.error(), m.get()));
    answer(respond, done, *m, *shared_req, image_outputs(*m, *r), nlohmann::json::object(), 0);
  });
}

Result<std::vector<NamedTensor>> tensor_feeds(const LoadedModel& m, InferRequest& req) {
  std::vector<NamedTensor> feeds;
  const auto& specs = m.session->inputs();
  for (auto& t : req.inputs) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == t.name; });
    if (spec == specs.end()) return make_error(ErrorCode::kInvalidArgument, "the model has no input '" + t.name + "'", "inputs");
    if (oip_datatype(t.datatype) != spec->dtype)
      return make_error(ErrorCode::kInvalidArgument,
                        "input '" + t.name + "' is " + t.datatype + " but the model declares " + oip_datatype_name(spec->dtype),
                        "inputs");
    if (spec->has_shape) {
      bool ok = spec->dims.size() == t.shape.size();
      for (size_t d = 0; ok && d < t.shape.size(); ++d) ok = spec->dims[d] < 0 || spec->dims[d] == t.shape[d];
      if (!ok) {
        Shape declared(spec->dims.begin(), spec->dims.end());
        return make_error(ErrorCode::kInvalidArgument,
                          "input '" + t.name + "' has shape " + shape_to_string(t.shape) + " but the model declares " +
                              shape_to_string(declared) + " (-1 = any)", "inputs");
      }
    }
    if (t.datatype == "BYTES") {  // a string tensor (categories, labels): the strings as sent, row-major
      auto s = Tensor::strings(t.shape, std::move(t.bytes));
      if (!s.ok()) return std::move(s).take_error().with_where("input '" + t.name + "'");
      t.tensor = std::move(s).value();
    }
    feeds.push_back({t.name, std::move(t.tensor)});
  }
  for (const auto& s : specs) {
    const bool given = std::any_of(feeds.begin(), feeds.end(), [&](const NamedTensor& f) { return f.name == s.name; });
    if (!given) return make_error(ErrorCode::kInvalidArgument, "missing input '" + s.name + "'", "inputs");
  }
  return feeds;
}

void infer_tensor(ServerContext& ctx, std::shared_ptr<const LoadedModel> m, InferRequest req, const Responder& respond,
                  const HttpRequest& http, InferAnswer done) {
  auto feeds = tensor_feeds(*m, req);
  if (!feeds.ok()) return respond(error_response(feeds.error(), nullptr));
  if (Status st = check_outputs_exist(*m, req); !st.ok()) return respond(error_response(st.error(), nullptr));
  TensorJob job;
  job.feeds = std::move(feeds).value();
  auto shared_req = std::make_shared<InferRequest>(std::move(req));
  job.done = [respond, done = std::move(done), m, shared_req](Result<std::vector<NamedTensor>> r) {
    if (!r.ok()) return respond(error_response(r.error(), m.get()));
    std::vector<OipTensor> outs;
    for (auto& o : *r) {
      OipTensor t{o.name, oip_datatype_name(o.tensor.dtype()), o.tensor.shape(), {}, {}};
      if (const std::string* s = o.tensor.string_data()) t.bytes.assign(s, s + o.tensor.numel());  // BYTES
      else t.tensor = std::move(o.tensor);
      outs.push_back(std::move(t));
    }
    answer(respond, done, *m, *shared_req, std::move(outs), nlohmann::json::object(), 0);
  };
  WorkItem item = make_work(ctx, m, std::move(job), http);
  submit_work(ctx, std::move(item), respond);
}

// Generation models: text_input -> text_output through the model's GenerationWorker (oip_generate.h).
// The answer names the model by a copy of its identity: the jobs must not own the model (their last
// reference would stop the worker from its own thread).
void infer_generation(ServerContext& ctx, std::shared_ptr<const LoadedModel> m, InferRequest req, const Responder& respond,
                      const HttpRequest& http, InferAnswer done) {
  if (Status st = check_outputs_exist(*m, req); !st.ok()) return respond(error_response(st.error(), nullptr));
  auto named = std::make_shared<LoadedModel>();
  named->name = m->name;
  named->version = m->version;
  named->kind = m->kind;
  named->outputs = m->outputs;
  auto shared_req = std::make_shared<InferRequest>(std::move(req));
  infer_generate(ctx, std::move(m), *shared_req, respond, http,
                 [respond, done = std::move(done), named, shared_req](std::vector<OipTensor> outs, const nlohmann::json& params) {
                   answer(respond, done, *named, *shared_req, std::move(outs), params, 0);
                 });
}

// OIP request parameters Triton clients send: "timeout" (microseconds) and "priority" (1 = high).
Status read_scheduling_parameters(const InferRequest& req, RequestMeta& meta) {
  meta.id = req.id;
  if (auto t = req.parameters.find("timeout"); t != req.parameters.end()) {
    if (!t->is_number_unsigned()) return make_error(ErrorCode::kInvalidArgument, "parameters.timeout must be a non-negative integer (microseconds)", "parameters");
    meta.timeout_ms = static_cast<int64_t>(t->get<uint64_t>() / 1000);
  }
  if (auto p = req.parameters.find("priority"); p != req.parameters.end()) {
    if (!p->is_number_unsigned()) return make_error(ErrorCode::kInvalidArgument, "parameters.priority must be a non-negative integer", "parameters");
    meta.high_priority = p->get<uint64_t>() == 1;
  }
  return {};
}

}  // namespace

void submit_infer(ServerContext& ctx, const HttpRequest& http, std::shared_ptr<const LoadedModel> m, InferRequest req,
                  const Responder& respond, InferAnswer done) {
  if (ctx.draining.load()) return respond(draining_refusal());
  if (Status st = read_scheduling_parameters(req, *http.meta); !st.ok()) return respond(error_response(st.error(), nullptr));
  if (m->kind == ModelKind::kGeneration) return infer_generation(ctx, std::move(m), std::move(req), respond, http, std::move(done));
  if (m->takes_images()) return infer_image(ctx, std::move(m), std::move(req), respond, http, std::move(done));
  if (m->kind == ModelKind::kText) return infer_text(ctx, std::move(m), std::move(req), respond, http, std::move(done));
  infer_tensor(ctx, std::move(m), std::move(req), respond, http, std::move(done));
}

ModelLookup lookup_model(ServerContext& ctx, const std::string& name, const std::string& version) {
  if (!valid_model_name(name)) return {nullptr, 400, "invalid model name"};
  return ctx.repository.get(name, version);
}

const std::vector<std::string>& oip_extensions() {
  static const std::vector<std::string> e = {"binary_tensor_data", "model_repository", "glassbox_explain"};
  return e;
}

namespace {

// The model a /v2/models/{m}[/versions/{v}] route names, or the refusal (400 bad name, 404, 503).
ModelLookup lookup(ServerContext& ctx, const PathParams& params) { return lookup_model(ctx, params.get("m"), params.get("v")); }

}  // namespace

void oip_server_metadata(ServerContext&, HttpRequest&&, const PathParams&, Responder respond) {
  ojson j;
  j["name"] = "glassbox";
  j["version"] = glassbox::version();
  j["extensions"] = oip_extensions();
  j["cpu"] = diag::cpu_report_to_json(cpu_report());  // features, kernel per op class, precision rule
  respond(json_response(200, j));
}

void oip_health_live(ServerContext&, HttpRequest&&, const PathParams&, Responder respond) {
  respond(json_response(200, ojson{{"live", true}}));
}

void oip_health_ready(ServerContext& ctx, HttpRequest&&, const PathParams&, Responder respond) {
  const bool ready = !ctx.draining.load() && ctx.repository.ready();
  respond(json_response(ready ? 200 : 503, ojson{{"ready", ready}}));
}

void oip_model_metadata(ServerContext& ctx, HttpRequest&&, const PathParams& params, Responder respond) {
  ModelLookup look = lookup(ctx, params);
  if (!look.model) return respond(lookup_refusal(look));
  respond(model_metadata(*look.model));
}

void oip_model_ready(ServerContext& ctx, HttpRequest&&, const PathParams& params, Responder respond) {
  ModelLookup look = lookup(ctx, params);
  if (look.status == 404 || look.status == 400) return respond(lookup_refusal(look));
  const bool ready = look.model != nullptr && !ctx.draining.load();
  respond(json_response(ready ? 200 : 503, ojson{{"name", params.get("m")}, {"ready", ready}}));
}

void oip_model_infer(ServerContext& ctx, HttpRequest&& req, const PathParams& params, Responder respond) {
  ModelLookup look = lookup(ctx, params);
  if (!look.model) return respond(lookup_refusal(look));
  if (ctx.draining.load()) return respond(draining_refusal());
  auto parsed = parse_infer_request(req, oip_limits(ctx.options));
  if (!parsed.ok()) return respond(error_response(parsed.error(), nullptr));
  submit_infer(ctx, req, std::move(look.model), std::move(parsed).value(), respond,
               [respond](const LoadedModel& m, const InferRequest& r, std::vector<OipTensor> outs, std::vector<bool> binary,
                         const nlohmann::json& parameters, int64_t dropped) {
                 rest_answer(respond, m, r, std::move(outs), std::move(binary), parameters, dropped);
               });
}

void oip_model_explain(ServerContext& ctx, HttpRequest&&, const PathParams& params, Responder respond) {
  ModelLookup look = lookup(ctx, params);
  if (!look.model) return respond(lookup_refusal(look));
  ojson j;
  j["name"] = look.model->name;
  j["version"] = look.model->version;
  j["model"] = look.model->explain;
  j["server"] = ctx.server_explain;
  respond(json_response(200, j));
}

}  // namespace glassbox::server
