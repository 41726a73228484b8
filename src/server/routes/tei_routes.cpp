// Hugging Face text-embeddings-inference routes: /embed, /predict, /tokenize, /decode,
// /info, /health. With several models, the body field "model" picks one; otherwise the one
// text model of the route's kind serves.
#include <algorithm>
#include <functional>
#include <memory>

#include "glassbox/version.h"
#include "server/codec/json_body.h"
#include "server/routes/embed_request.h"
#include "server/routes/image_routes.h"
#include "server/routes/router.h"

namespace glassbox::server {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

ModelLookup pick_model(ServerContext& ctx, const json& body, std::optional<PipelineTask> task) {
  auto name = optional_string(body, "model");
  if (!name.ok()) return {nullptr, 400, name.error().what};
  if (*name) {
    if (!valid_model_name(**name)) return {nullptr, 400, "invalid model name"};
    ModelLookup l = ctx.repository.get(**name);
    if (l.model && !l.model->pipeline) return {nullptr, 400, "model '" + **name + "' is not a text model (no tokenizer.json)"};
    return l;
  }
  if (task) return ctx.repository.default_text_model(*task);
  ModelLookup cls = ctx.repository.default_text_model(PipelineTask::kClassify);
  if (cls.model) return cls;
  return ctx.repository.default_text_model(PipelineTask::kEmbed);
}

HttpResponse overlong(const Error& e, const LoadedModel& m) {
  if (e.code != ErrorCode::kLimitExceeded) return error_response(e, &m);
  Error x = e;
  x.fix = "send \"truncate\": true to drop the tokens past the limit (the response reports how many), or shorten the text";
  return refuse(RefusalCode::kTooLarge, client_message(x, m), "inputs");
}

// "inputs" of /predict: a string, a list of strings, or a list of [text, pair] lists.
Result<std::vector<PipelineInput>> predict_inputs(const json& v, const ServerOptions& o) {
  if (v.is_array() && !v.empty() && v[0].is_array()) {
    if (static_cast<int64_t>(v.size()) > o.max_texts_per_request)
      return make_error(ErrorCode::kInvalidArgument, "too many inputs, over the server's max_texts_per_request", "body: \"inputs\"");
    std::vector<PipelineInput> out;
    for (const auto& p : v) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
        return make_error(ErrorCode::kInvalidArgument, "a pair must be [text, text_pair]", "body: \"inputs\"");
      out.push_back({p[0].get<std::string>(), p[1].get<std::string>()});
    }
    return out;
  }
  return parse_texts(v, "inputs", o);
}

Result<bool> read_truncate(const json& body) {
  GB_ASSIGN_OR_RETURN(auto t, optional_bool(body, "truncate"));
  return t.value_or(false);
}

// /embed's answer: one vector per input, the tokens each lost to truncation in the headers.
std::function<void(Result<TextResults>)> embed_answer(const Responder& respond, std::shared_ptr<const LoadedModel> m) {
  return [respond, m](Result<TextResults> r) {
    if (!r.ok()) return respond(embed_error_response(r.error(), *m, "inputs"));
    json out = json::array();
    std::vector<int64_t> dropped;
    for (const auto& e : r->embeddings) {
      out.push_back(e.vector);
      dropped.push_back(e.tokens_dropped);
    }
    HttpResponse res = json_response(200, out);
    add_dropped_headers(res, dropped);
    respond(std::move(res));
  };
}

void text_task(ServerContext& ctx, const HttpRequest& req, const Responder& respond, PipelineTask task) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_model(ctx, *body, task);
  if (!look.model) return respond(lookup_refusal(look));
  if (look.model->pipeline->decisions().task != task)
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + look.model->name + "' is " +
                              (task == PipelineTask::kEmbed ? "a classification model: use /predict" : "an embedding model: use /embed"),
                          "model"));
  if (look.model->is_sparse() || look.model->pipeline->decisions().multi_vector)
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + look.model->name + (look.model->is_sparse() ? "' gives sparse vectors: use /embed_sparse"
                                                          : "' gives one vector per token (ColBERT): use /embed_multi"),
                          "model"));
  if (task == PipelineTask::kEmbed)
    if (auto no = refuse_undeclared_head(*look.model, "dense")) return respond(refuse(std::move(*no)));
  if (!body->contains("inputs")) return respond(refuse(RefusalCode::kInvalidRequest, "body has no \"inputs\"", "inputs"));
  auto inputs = task == PipelineTask::kEmbed ? parse_texts((*body)["inputs"], "inputs", ctx.options)
                                             : predict_inputs((*body)["inputs"], ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  TextJob job;
  if (task == PipelineTask::kEmbed) {  // overflow, truncation_direction, prompt_name, normalize, dimensions
    Status st = read_embed_fields(*body, true, *inputs, job);
    if (!st.ok()) return respond(error_response(st.error(), nullptr));
  } else {
    auto truncate = read_truncate(*body);
    if (!truncate.ok()) return respond(error_response(truncate.error(), nullptr));
    for (auto& in : *inputs) in.allow_truncation = *truncate;
  }
  job.task = task;
  job.inputs = std::move(inputs).value();
  const bool single = (*body)["inputs"].is_string();
  auto m = look.model;
  if (task == PipelineTask::kEmbed) {
    job.done = embed_answer(respond, m);
  } else {
    auto top_k = optional_int(*body, "top_k");
    auto raw = optional_bool(*body, "raw_scores");
    if (!top_k.ok()) return respond(error_response(top_k.error(), nullptr));
    if (!raw.ok()) return respond(error_response(raw.error(), nullptr));
    const int64_t k = top_k->value_or(1);
    if (k < 1) return respond(refuse(RefusalCode::kInvalidRequest, "\"top_k\" must be at least 1", "top_k"));
    const bool raw_scores = raw->value_or(false);
    job.done = [respond, m, k, raw_scores, single](Result<TextResults> r) {
      if (!r.ok()) return respond(overlong(r.error(), *m));
      const auto& labels = m->pipeline->decisions().labels;
      json out = json::array();
      int64_t dropped = 0;
      for (const auto& c : r->classes) {
        json entries = json::array();
        for (size_t i = 0; i < c.labels.size() && static_cast<int64_t>(i) < k; ++i) {
          float score = c.labels[i].score;
          if (raw_scores) {
            const auto at = std::find(labels.begin(), labels.end(), c.labels[i].label) - labels.begin();
            score = c.logits[static_cast<size_t>(at)];
          }
          entries.push_back({{"label", c.labels[i].label}, {"score", score}});
        }
        // The model declares abstain_below (glassbox.json) and this text's top score is under it: the top entry
        // says so (an extra key; the labels and scores are the same as without it).
        if (c.abstained && !entries.empty()) entries[0]["abstained"] = true;
        out.push_back(std::move(entries));
        dropped += c.tokens_dropped;
      }
      HttpResponse res = json_response(200, single ? out[0] : out);
      add_truncation_header(res, dropped);
      respond(std::move(res));
    };
  }
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

json tokens_json(const Encoding& e, const std::string& text) {
  json out = json::array();
  for (size_t i = 0; i < e.size(); ++i) {
    const bool special = e.special_tokens_mask[i] != 0;
    const auto [start, stop] = e.offsets[i];
    json t = {{"id", e.ids[i]}, {"text", special || stop > text.size() ? e.tokens[i] : text.substr(start, stop - start)},
              {"special", special}, {"start", start}, {"stop", stop}};
    out.push_back(std::move(t));
  }
  return out;
}

void tokenize(ServerContext& ctx, const HttpRequest& req, const Responder& respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_model(ctx, *body, std::nullopt);
  if (!look.model) return respond(lookup_refusal(look));
  if (!body->contains("inputs")) return respond(refuse(RefusalCode::kInvalidRequest, "body has no \"inputs\"", "inputs"));
  auto inputs = parse_texts((*body)["inputs"], "inputs", ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  auto special = optional_bool(*body, "add_special_tokens");
  if (!special.ok()) return respond(error_response(special.error(), nullptr));
  auto m = look.model;
  const bool add_special = special->value_or(true);
  auto texts = std::make_shared<std::vector<PipelineInput>>(std::move(inputs).value());
  TaskJob job{[respond, m, texts, add_special] {
    EncodeOptions opts;
    opts.add_special_tokens = add_special;
    opts.truncation_from_file = false;  // tokenize reports every token, as TEI does
    opts.padding_from_file = false;
    opts.offsets = OffsetUnit::kBytes;  // start/stop index the UTF-8 bytes of the text, as TEI's do
    json out = json::array();
    for (size_t i = 0; i < texts->size(); ++i) {
      auto e = m->pipeline->tokenizer().encode((*texts)[i].text, std::nullopt, opts);
      if (!e.ok()) return respond(error_response(std::move(e).take_error().with_where("input " + std::to_string(i)), m.get()));
      out.push_back(tokens_json(*e, (*texts)[i].text));
    }
    respond(json_response(200, out));
  }};
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

Result<std::vector<uint32_t>> ids_of(const json& v) {
  if (!v.is_array()) return make_error(ErrorCode::kInvalidArgument, "ids must be a list of integers", "body: \"ids\"");
  std::vector<uint32_t> ids;
  for (const auto& x : v) {
    if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX)
      return make_error(ErrorCode::kInvalidArgument, "ids must be non-negative integers", "body: \"ids\"");
    ids.push_back(static_cast<uint32_t>(x.get<uint64_t>()));
  }
  return ids;
}

void decode(ServerContext& ctx, const HttpRequest& req, const Responder& respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_model(ctx, *body, std::nullopt);
  if (!look.model) return respond(lookup_refusal(look));
  if (!body->contains("ids")) return respond(refuse(RefusalCode::kInvalidRequest, "body has no \"ids\"", "ids"));
  const json& v = (*body)["ids"];
  const bool batch = v.is_array() && !v.empty() && v[0].is_array();
  std::vector<std::vector<uint32_t>> lists;
  for (const json& one : batch ? v : json::array({v})) {
    auto ids = ids_of(one);
    if (!ids.ok()) return respond(error_response(ids.error(), nullptr));
    lists.push_back(std::move(ids).value());
  }
  auto skip = optional_bool(*body, "skip_special_tokens");
  if (!skip.ok()) return respond(error_response(skip.error(), nullptr));
  auto m = look.model;
  const bool skip_special = skip->value_or(true);
  auto shared = std::make_shared<std::vector<std::vector<uint32_t>>>(std::move(lists));
  TaskJob job{[respond, m, shared, skip_special, batch] {
    json out = json::array();
    for (const auto& ids : *shared) {
      auto text = m->pipeline->tokenizer().decode(ids, skip_special);
      if (!text.ok()) return respond(error_response(text.error(), m.get()));
      out.push_back(*text);
    }
    respond(json_response(200, batch ? out : out[0]));
  }};
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

// TEI's names where TEI has the mode ("cls", "mean", "last_token"), glassbox's for the modes
// only sentence-transformers has (max, mean_sqrt_len_tokens, weightedmean); several concatenated
// modes are joined by '+', in the order the vector holds them. Never a mode that did not run.
std::string tei_pooling(const std::vector<Pooling>& modes) {
  std::string s;
  for (Pooling p : modes) s += std::string(s.empty() ? "" : "+") + (p == Pooling::kLastToken ? "last_token" : pooling_name(p));
  return s;
}

// TEI's model_dtype names ("float32", "bfloat16"); int8-dynamic has no TEI name and keeps glassbox's.
const char* tei_dtype(Precision p) {
  switch (p) {
    case Precision::kFp32: return "float32";
    case Precision::kBf16: return "bfloat16";
    default: return precision_name(p);
  }
}

HttpResponse info(ServerContext& ctx) {
  ModelLookup look = ctx.repository.default_text_model(PipelineTask::kClassify);
  if (!look.model) look = ctx.repository.default_text_model(PipelineTask::kEmbed);
  if (!look.model) return lookup_refusal(look);
  const auto& d = look.model->pipeline->decisions();
  ojson j;
  j["model_id"] = look.model->name;
  j["model_sha"] = nullptr;
  // The precision the engine runs (glassbox.json / --precision), not the file's storage type.
  j["model_dtype"] = tei_dtype(look.model->pipeline->session().options().precision);
  if (d.task == PipelineTask::kClassify) {
    ojson id2label = ojson::object();
    for (size_t i = 0; i < d.labels.size(); ++i) id2label[std::to_string(i)] = d.labels[i];
    j["model_type"] = {{"classifier", {{"id2label", id2label}}}};
  } else {
    // TEI names a SPLADE head's pooling "splade" (its /embed_sparse models).
    j["model_type"] = {{"embedding", {{"pooling", d.sparse ? std::string("splade") : tei_pooling(d.pooling_modes)}}}};
  }
  j["max_input_length"] = d.max_length;
  j["max_client_batch_size"] = ctx.options.max_texts_per_request;
  j["auto_truncate"] = d.truncation.has_value();
  j["version"] = std::string("glassbox ") + glassbox::version();
  return json_response(200, j);
}

}  // namespace

void tei_embed(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) {
  if (image_tei_route(ctx, req, respond, /*embed=*/true)) return;  // image embedders (image_routes.cpp)
  text_task(ctx, req, respond, PipelineTask::kEmbed);
}

void tei_predict(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) {
  if (image_tei_route(ctx, req, respond, /*embed=*/false)) return;  // image classifiers and OCR (image_routes.cpp)
  text_task(ctx, req, respond, PipelineTask::kClassify);
}

void tei_tokenize(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) { tokenize(ctx, req, respond); }

void tei_decode(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) { decode(ctx, req, respond); }

void tei_info(ServerContext& ctx, HttpRequest&&, const PathParams&, Responder respond) { respond(info(ctx)); }

void tei_health(ServerContext& ctx, HttpRequest&&, const PathParams&, Responder respond) {
  if (ctx.draining.load()) return respond(draining_refusal());
  if (!ctx.repository.ready()) return respond(refuse(RefusalCode::kModelUnavailable, "not ready: no model serves yet"));
  respond(json_response(200, json::object()));
}

}  // namespace glassbox::server
