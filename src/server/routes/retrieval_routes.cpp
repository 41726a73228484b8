// Dense-retrieval routes beside TEI's /embed: POST /similarity (one source sentence against a list,
// scored with the model's declared similarity_fn_name), POST /embed_all (token-level vectors) and
// POST /embed_multi (a multi-vector model's unit vectors per kept token, queries or documents; or the
// multi_vector head of a model with declared heads),
// plus the request fields the embedding and rerank routes share (embed_request.h).
#include <cmath>

#include "glassbox/embedding_heads.h"
#include "server/codec/json_body.h"
#include "server/routes/embed_request.h"
#include "server/routes/router.h"

namespace glassbox::server {

using nlohmann::json;

Result<Overflow> read_overflow(const json& body, bool split_allowed) {
  GB_ASSIGN_OR_RETURN(auto truncate, optional_bool(body, "truncate"));
  GB_ASSIGN_OR_RETURN(auto overflow, optional_string(body, "overflow"));
  Overflow o = truncate.value_or(false) ? Overflow::kTruncate : Overflow::kError;
  if (!overflow) return o;
  const std::string& v = *overflow;
  const Overflow named = v == "error" ? Overflow::kError : v == "truncate" ? Overflow::kTruncate : Overflow::kSplit;
  if (v != "error" && v != "truncate" && v != "split")
    return make_error(ErrorCode::kInvalidArgument, "\"overflow\" must be \"error\", \"truncate\" or \"split\", got \"" + v + "\"",
                      "body: \"overflow\"");
  if (truncate && (*truncate != (named == Overflow::kTruncate)))
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("\"truncate\": ") + (*truncate ? "true" : "false") + " disagrees with \"overflow\": \"" + v + "\"",
                      "body: \"overflow\"", "send one of the two");
  if (named == Overflow::kSplit && !split_allowed)
    return make_error(ErrorCode::kInvalidArgument,
                      "\"overflow\": \"split\" applies to rerank (a document scores its best window); one vector per text "
                      "would need an aggregation of window vectors the model does not declare",
                      "body: \"overflow\"", "send \"truncate\", or split the text yourself and embed the parts");
  return named;
}

Result<Side> read_truncation_direction(const json& body) {
  GB_ASSIGN_OR_RETURN(auto d, optional_string(body, "truncation_direction"));
  if (!d || *d == "Right" || *d == "right") return Side::kRight;
  if (*d == "Left" || *d == "left") return Side::kLeft;
  return make_error(ErrorCode::kInvalidArgument, "\"truncation_direction\" must be \"Left\" or \"Right\", got \"" + *d + "\"",
                    "body: \"truncation_direction\"");
}

Status read_embed_fields(const json& fields, bool tei, std::vector<PipelineInput>& inputs, TextJob& job) {
  GB_ASSIGN_OR_RETURN(Overflow overflow, read_overflow(fields, false));
  GB_ASSIGN_OR_RETURN(Side direction, read_truncation_direction(fields));
  GB_ASSIGN_OR_RETURN(auto prompt_name, optional_string(fields, "prompt_name"));
  auto dimensions = optional_int(fields, "dimensions");
  if (!dimensions.ok()) return std::move(dimensions).take_error().with_where("body: \"dimensions\"");
  if (*dimensions && **dimensions < 1)
    return make_error(ErrorCode::kInvalidArgument, "\"dimensions\" must be at least 1, got " + std::to_string(**dimensions),
                      "body: \"dimensions\"");
  for (auto& in : inputs) {
    in.allow_truncation = overflow == Overflow::kTruncate;
    in.truncation_direction = direction;
    in.prompt_name = prompt_name;
  }
  job.dimensions = *dimensions;
  if (tei) {
    GB_ASSIGN_OR_RETURN(job.normalize, optional_bool(fields, "normalize"));
  }
  return {};
}

void add_dropped_headers(HttpResponse& r, const std::vector<int64_t>& dropped) {
  int64_t total = 0;
  std::string list;
  for (int64_t d : dropped) {
    total += d;
    list += (list.empty() ? "" : ",") + std::to_string(d);
  }
  add_truncation_header(r, total);
  if (total > 0) r.headers.emplace_back("X-Glassbox-Tokens-Dropped-Per-Input", list);
}

HttpResponse embed_error_response(const Error& e, const LoadedModel& m, const char* input_field) {
  Error x = e;
  if (x.code == ErrorCode::kLimitExceeded)
    x.fix = "send \"overflow\": \"truncate\" (or \"truncate\": true) to drop the tokens past the limit (the response reports "
            "how many, per input), or shorten the text";
  Refusal r = refusal_from_error(x, &m);
  if (r.code == RefusalCode::kTooLarge) r.param = input_field;
  if (x.code == ErrorCode::kInvalidArgument && x.what.rfind("dimensions ", 0) == 0) r.param = "dimensions";
  return refuse(std::move(r));
}

namespace {

ModelLookup pick_embedder(ServerContext& ctx, const json& body) {
  auto name = optional_string(body, "model");
  if (!name.ok()) return {nullptr, 400, name.error().what};
  ModelLookup l;
  if (*name) {
    if (!valid_model_name(**name)) return {nullptr, 400, "invalid model name"};
    l = ctx.repository.get(**name);
  } else {
    l = ctx.repository.default_text_model(PipelineTask::kEmbed);
  }
  if (l.model && !l.model->is_embedder()) return {nullptr, 400, "model '" + l.model->name + "' is not an embedding model"};
  return l;
}

std::vector<int64_t> dropped_of(const std::vector<Embedding>& es) {
  std::vector<int64_t> d;
  for (const auto& e : es) d.push_back(e.tokens_dropped);
  return d;
}

// TEI: {inputs: {source_sentence, sentences}, parameters?: {truncate, truncation_direction, prompt_name}}
// (glassbox also reads "overflow" there). Answer: one score per sentence, in order.
void similarity(ServerContext& ctx, const HttpRequest& req, const Responder& respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_embedder(ctx, *body);
  if (!look.model) return respond(lookup_refusal(look));
  if (auto no = refuse_undeclared_head(*look.model, "dense")) return respond(refuse(std::move(*no)));
  const json* in = body->contains("inputs") ? &(*body)["inputs"] : nullptr;
  if (!in || !in->is_object() || !in->contains("source_sentence") || !(*in)["source_sentence"].is_string() ||
      !in->contains("sentences") || !(*in)["sentences"].is_array() || (*in)["sentences"].empty())
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "\"inputs\" must be {\"source_sentence\": string, \"sentences\": [string, ...]} (at least one sentence)",
                          "inputs"));
  json texts = json::array({(*in)["source_sentence"]});
  for (const auto& s : (*in)["sentences"]) texts.push_back(s);
  auto inputs = parse_texts(texts, "inputs", ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  const json params = body->contains("parameters") && !(*body)["parameters"].is_null() ? (*body)["parameters"] : json::object();
  if (!params.is_object()) return respond(refuse(RefusalCode::kInvalidRequest, "\"parameters\" must be an object", "parameters"));
  TextJob job;
  job.task = PipelineTask::kEmbed;
  Status st = read_embed_fields(params, false, *inputs, job);
  if (!st.ok()) return respond(error_response(st.error(), nullptr));
  job.inputs = std::move(inputs).value();
  auto m = look.model;
  job.done = [respond, m](Result<TextResults> r) {
    if (!r.ok()) return respond(embed_error_response(r.error(), *m, "inputs"));
    const auto& es = r->embeddings;
    const std::string& fn = m->pipeline->decisions().similarity;
    json out = json::array();
    for (size_t i = 1; i < es.size(); ++i) {
      auto s = vector_similarity(fn, es[0].vector, es[i].vector);
      if (!s.ok()) return respond(error_response(s.error(), m.get()));
      out.push_back(static_cast<float>(*s));
    }
    HttpResponse res = json_response(200, out);
    res.headers.emplace_back("X-Glassbox-Similarity", fn);
    add_dropped_headers(res, dropped_of(es));
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, look.model, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

// The answer of /embed_all and /embed_multi: per text, its flat vector cut into rows_of(e) equal rows
// (token vectors, or a multi-vector model's per-token vectors), and the dropped-token headers.
// `head`: the head of a heads job's answer to read (empty: a plain embed job).
template <class RowsOf>
std::function<void(Result<TextResults>)> rows_answer(Responder respond, std::shared_ptr<const LoadedModel> m,
                                                      RowsOf rows_of, std::string head = {}) {
  return [respond, m, rows_of, head](Result<TextResults> r) {
    if (r.ok() && !head.empty())
      if (Status st = take_head(*r, head); !st.ok()) r = std::move(st).take_error();
    if (!r.ok()) return respond(embed_error_response(r.error(), *m, "inputs"));
    json out = json::array();
    for (const auto& e : r->embeddings) {
      const int64_t n = rows_of(e);
      const size_t width = n > 0 ? e.vector.size() / static_cast<size_t>(n) : 0;
      json rows = json::array();
      for (int64_t t = 0; t < n; ++t)
        rows.push_back(std::vector<float>(e.vector.begin() + static_cast<std::ptrdiff_t>(t * width),
                                          e.vector.begin() + static_cast<std::ptrdiff_t>((t + 1) * width)));
      out.push_back(std::move(rows));
    }
    HttpResponse res = json_response(200, out);
    add_dropped_headers(res, dropped_of(r->embeddings));
    respond(std::move(res));
  };
}

// TEI: {inputs, truncate?, truncation_direction?, prompt_name?} -> per text, per token, a vector.
void embed_all(ServerContext& ctx, const HttpRequest& req, const Responder& respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_embedder(ctx, *body);
  if (!look.model) return respond(lookup_refusal(look));
  if (!body->contains("inputs")) return respond(refuse(RefusalCode::kInvalidRequest, "body has no \"inputs\"", "inputs"));
  auto inputs = parse_texts((*body)["inputs"], "inputs", ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  if (body->contains("dimensions") || body->contains("normalize"))
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "/embed_all gives the model's token vectors as they are: \"dimensions\" and \"normalize\" apply to /embed",
                          body->contains("dimensions") ? "dimensions" : "normalize"));
  TextJob job;
  job.task = PipelineTask::kEmbed;
  job.token_vectors = true;
  Status st = read_embed_fields(*body, false, *inputs, job);
  if (!st.ok()) return respond(error_response(st.error(), nullptr));
  job.inputs = std::move(inputs).value();
  job.done = rows_answer(respond, look.model, [](const Embedding& e) { return e.tokens; });
  WorkItem item = make_work(ctx, look.model, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

// glassbox: {inputs, query?: false, overflow?/truncate?, truncation_direction?, prompt_name?, model?} -> per
// text, per kept token, a unit vector of the model's multi-vector head (docs/retrieval.md).
void embed_multi(ServerContext& ctx, const HttpRequest& req, const Responder& respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  ModelLookup look = pick_embedder(ctx, *body);
  if (!look.model) return respond(lookup_refusal(look));
  const bool heads = embedding_heads(*look.model->pipeline) != nullptr;  // the multi_vector head of a heads model
  if (auto no = refuse_undeclared_head(*look.model, "multi_vector")) return respond(refuse(std::move(*no)));
  if (!heads && !look.model->pipeline->decisions().multi_vector)
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + look.model->name + "' gives one vector per text (no multi-vector head: modules.json "
                          "pylate.models.Dense.Dense or glassbox.json \"multi_vector\"): use /embed",
                          "model"));
  if (!body->contains("inputs")) return respond(refuse(RefusalCode::kInvalidRequest, "body has no \"inputs\"", "inputs"));
  auto inputs = parse_texts((*body)["inputs"], "inputs", ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  if (body->contains("dimensions") || body->contains("normalize"))
    return respond(refuse(RefusalCode::kInvalidRequest, "a multi-vector model's token vectors are unit vectors of the model's size",
                          body->contains("dimensions") ? "dimensions" : "normalize"));
  auto query = optional_bool(*body, "query");
  if (!query.ok()) return respond(error_response(query.error(), nullptr));
  if (heads && query->value_or(false))
    return respond(refuse(RefusalCode::kInvalidRequest,
                          "model '" + look.model->name + "' encodes queries and documents alike (a declared multi_vector head, "
                          "BGE-M3's colbert vectors): \"query\": true applies to a ColBERT (PyLate) model", "query"));
  TextJob job;
  job.task = PipelineTask::kEmbed;
  Status st = read_embed_fields(*body, false, *inputs, job);
  if (!st.ok()) return respond(error_response(st.error(), nullptr));
  for (auto& in : *inputs) in.query = query->value_or(false);
  job.inputs = std::move(inputs).value();
  if (heads) job.heads = {"multi_vector"};  // one run gives every head; this answer reads one
  job.done = rows_answer(respond, look.model, [](const Embedding& e) { return e.vectors; }, heads ? "multi_vector" : "");
  WorkItem item = make_work(ctx, look.model, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

}  // namespace

GB_ROUTE_HANDLER(tei_embed_multi) {
  (void)params;
  embed_multi(ctx, req, respond);
}

GB_ROUTE_HANDLER(tei_similarity) {
  (void)params;
  similarity(ctx, req, respond);
}

GB_ROUTE_HANDLER(tei_embed_all) {
  (void)params;
  embed_all(ctx, req, respond);
}

}  // namespace glassbox::server
