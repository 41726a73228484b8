// Rerank routes: TEI's POST /rerank and the Cohere/Jina-shaped POST /v1/rerank, on a
// cross-encoder (a classify model with one label). Both go through the scheduler as a classify
// job of (query, document) pairs; glassbox::rank_documents scores and sorts them with the
// model's declared score function (docs/retrieval.md "Rerank"). On a multi-vector (ColBERT) model
// they go through it as an embed job (the query, then the documents) and glassbox::rank_by_max_sim
// ranks the documents by MaxSim (docs/retrieval.md "Multi-vector embeddings and late interaction").
#include "glassbox/late_interaction.h"
#include "glassbox/pipeline.h"
#include "server/codec/json_body.h"
#include "server/routes/embed_request.h"
#include "server/routes/router.h"

namespace glassbox::server {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

struct RerankRequest {
  std::optional<std::string> model;
  std::string query;
  std::vector<std::string> documents;
  RerankOptions options;
  bool return_text = false;
};

Status read_query(const json& body, RerankRequest& r) {
  GB_ASSIGN_OR_RETURN(auto q, optional_string(body, "query"));
  if (!q) return make_error(ErrorCode::kInvalidArgument, "body has no \"query\" (a string)", "body: \"query\"");
  if (!valid_utf8(*q)) return make_error(ErrorCode::kInvalidArgument, "\"query\" is not valid UTF-8", "body: \"query\"");
  r.query = std::move(*q);
  GB_ASSIGN_OR_RETURN(r.model, optional_string(body, "model"));
  return {};
}

// Cohere/Jina "documents": strings, or objects {"text": ...}.
Result<json> document_texts(const json& body) {
  if (!body.contains("documents") || !body["documents"].is_array())
    return make_error(ErrorCode::kInvalidArgument, "body has no \"documents\" list", "body: \"documents\"");
  json texts = json::array();
  for (const auto& d : body["documents"]) {
    if (d.is_string()) texts.push_back(d);
    else if (d.is_object() && d.contains("text") && d["text"].is_string()) texts.push_back(d["text"]);
    else return make_error(ErrorCode::kInvalidArgument, "each document must be a string or {\"text\": string}", "body: \"documents\"");
  }
  return texts;
}

Status read_documents(const json& texts, const char* field, const ServerOptions& o, RerankRequest& r) {
  if (!texts.is_array()) return make_error(ErrorCode::kInvalidArgument, std::string("\"") + field + "\" must be a list of strings",
                                           std::string("body: \"") + field + "\"");
  GB_ASSIGN_OR_RETURN(auto inputs, parse_texts(texts, field, o));
  for (auto& in : inputs) r.documents.push_back(std::move(in.text));
  return {};
}

// The long-document policy (embed_request.h): "overflow" / "truncate", and "truncation_direction".
Status read_policy(const json& body, RerankRequest& r) {
  GB_ASSIGN_OR_RETURN(Overflow o, read_overflow(body, true));
  GB_ASSIGN_OR_RETURN(r.options.direction, read_truncation_direction(body));
  r.options.truncate = o == Overflow::kTruncate;
  r.options.split = o == Overflow::kSplit;
  return {};
}

// TEI: {query, texts, raw_scores?, return_text?, truncate?, truncation_direction?: "Left"|"Right"}.
Result<RerankRequest> parse_tei(const json& body, const ServerOptions& o) {
  RerankRequest r;
  GB_RETURN_IF_ERROR(read_query(body, r));
  if (!body.contains("texts")) return make_error(ErrorCode::kInvalidArgument, "body has no \"texts\"", "body: \"texts\"");
  GB_RETURN_IF_ERROR(read_documents(body["texts"], "texts", o, r));
  GB_ASSIGN_OR_RETURN(auto raw, optional_bool(body, "raw_scores"));
  GB_ASSIGN_OR_RETURN(auto text, optional_bool(body, "return_text"));
  r.options.raw_scores = raw.value_or(false);
  r.return_text = text.value_or(false);
  GB_RETURN_IF_ERROR(read_policy(body, r));
  return r;
}

// Cohere / Jina: {model?, query, documents, top_n?, return_documents? (default false, Cohere's)}.
Result<RerankRequest> parse_cohere(const json& body, const ServerOptions& o) {
  RerankRequest r;
  GB_RETURN_IF_ERROR(read_query(body, r));
  GB_ASSIGN_OR_RETURN(json texts, document_texts(body));
  GB_RETURN_IF_ERROR(read_documents(texts, "documents", o, r));
  GB_ASSIGN_OR_RETURN(auto top_n, optional_int(body, "top_n"));
  GB_ASSIGN_OR_RETURN(auto docs, optional_bool(body, "return_documents"));
  if (top_n && *top_n < 1) return make_error(ErrorCode::kInvalidArgument, "\"top_n\" must be at least 1", "body: \"top_n\"");
  if (top_n) r.options.top_n = static_cast<size_t>(*top_n);
  r.return_text = docs.value_or(false);
  GB_RETURN_IF_ERROR(read_policy(body, r));
  return r;
}

ModelLookup pick_cross_encoder(ServerContext& ctx, const std::optional<std::string>& name) {
  ModelLookup l;
  if (name) {
    if (!valid_model_name(*name)) return {nullptr, 400, "invalid model name"};
    l = ctx.repository.get(*name);
  } else {
    l = ctx.repository.default_text_model(PipelineTask::kClassify);
    if (!l.model) {  // no cross-encoder: the one multi-vector embedder serves late interaction
      ModelLookup e = ctx.repository.default_text_model(PipelineTask::kEmbed);
      if (e.model && e.model->pipeline && e.model->pipeline->decisions().multi_vector) l = e;
    }
  }
  if (!l.model) return l;
  if (l.model->pipeline && l.model->pipeline->decisions().multi_vector) return l;  // late interaction
  if (!l.model->pipeline || l.model->pipeline->decisions().task != PipelineTask::kClassify ||
      l.model->pipeline->decisions().labels.size() != 1)
    return {nullptr, 400, "model '" + l.model->name + "' is not a cross-encoder (a text classifier with one label) or a "
                          "multi-vector (ColBERT) model: rerank needs one"};
  return l;
}

// What the declared policy did to this document: tokens cut (truncate) or windows scored (split).
void add_policy_fields(ojson& e, const RankedDocument& d, const RerankOptions& o) {
  if (o.truncate) e["tokens_dropped"] = d.tokens_dropped;
  if (o.split) e["windows"] = d.windows;
}

// An overlong pair names the document (its index in the request) and the pair's token count.
HttpResponse rerank_error(Error e, const LoadedModel& m) {
  if (e.code == ErrorCode::kLimitExceeded) {
    if (e.where.rfind("input ", 0) == 0) e.where = "document " + e.where.substr(6) + " (with the query)";
    if (e.what.rfind("input has ", 0) == 0) e.what = "the pair has " + e.what.substr(10);
    e.fix = "send \"overflow\": \"truncate\" (or \"truncate\": true) to cut the documents (never the query) to the model's "
            "max_length, each result saying how many tokens it lost, or \"overflow\": \"split\" to score each document by "
            "its best window";
  }
  return error_response(e, &m);
}

ojson tei_body(const std::vector<RankedDocument>& ranked, const RerankRequest& r) {
  ojson out = ojson::array();
  for (const auto& d : ranked) {
    ojson e{{"index", d.index}, {"score", d.score}};
    if (r.return_text) e["text"] = r.documents[d.index];
    add_policy_fields(e, d, r.options);
    out.push_back(std::move(e));
  }
  return out;
}

ojson cohere_body(const std::vector<RankedDocument>& ranked, const RerankRequest& r, const std::string& model,
                  int64_t total_tokens) {
  ojson results = ojson::array();
  for (const auto& d : ranked) {
    ojson e{{"index", d.index}, {"relevance_score", d.score}};
    if (r.return_text) e["document"] = {{"text", r.documents[d.index]}};
    add_policy_fields(e, d, r.options);
    results.push_back(std::move(e));
  }
  return ojson{{"model", model}, {"results", std::move(results)}, {"usage", {{"total_tokens", total_tokens}}}};
}

}  // namespace

namespace {

// Late interaction: one embed job (the query, then the documents), ranked by MaxSim when it completes.
void late_interaction_route(ServerContext& ctx, HttpRequest&& req, bool cohere, std::shared_ptr<RerankRequest> request,
                            std::shared_ptr<const LoadedModel> m, Responder respond) {
  auto inputs = late_interaction_inputs(request->query, request->documents, request->options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  TextJob job;
  job.task = PipelineTask::kEmbed;
  job.inputs = std::move(inputs).value();
  job.done = [respond, m, request, cohere](Result<TextResults> r) {
    if (!r.ok()) {
      Error e = r.error();
      if (e.code == ErrorCode::kLimitExceeded && e.where.rfind("input ", 0) == 0) {
        const long i = std::stol(e.where.substr(6));
        e.where = i == 0 ? "query" : "document " + std::to_string(i - 1);
        e.fix = "send \"overflow\": \"truncate\" (or \"truncate\": true) to cut the documents to the model's "
                "document_length, each result saying how many tokens it lost";
      }
      return respond(error_response(e, m.get()));
    }
    auto ranked = rank_by_max_sim(r->embeddings, request->options);
    if (!ranked.ok()) return respond(error_response(ranked.error(), m.get()));
    int64_t tokens = 0;
    std::vector<int64_t> dropped;
    for (size_t i = 1; i < r->embeddings.size(); ++i) {
      tokens += r->embeddings[i].tokens;
      dropped.push_back(r->embeddings[i].tokens_dropped);
    }
    HttpResponse res = json_response(200, cohere ? cohere_body(*ranked, *request, m->name, tokens) : tei_body(*ranked, *request));
    add_dropped_headers(res, dropped);
    res.headers.emplace_back("X-Glassbox-Rerank-Score", "MaxSim");
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

void rerank_route(ServerContext& ctx, HttpRequest&& req, bool cohere, Responder respond) {
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  auto parsed = cohere ? parse_cohere(*body, ctx.options) : parse_tei(*body, ctx.options);
  if (!parsed.ok()) return respond(error_response(parsed.error(), nullptr));
  auto request = std::make_shared<RerankRequest>(std::move(parsed).value());
  ModelLookup look = pick_cross_encoder(ctx, request->model);
  if (!look.model) return respond(lookup_refusal(look));
  auto m = look.model;
  if (m->pipeline->decisions().multi_vector)
    return late_interaction_route(ctx, std::move(req), cohere, request, m, std::move(respond));
  TextJob job;
  job.task = PipelineTask::kClassify;
  job.inputs = rerank_inputs(request->query, request->documents, request->options);
  job.done = [respond, m, request, cohere](Result<TextResults> r) {
    if (!r.ok()) return respond(rerank_error(r.error(), *m));
    auto per_document = r->source.empty() ? Result<std::vector<Classification>>(std::move(r->classes))
                                          : max_over_windows(std::move(r->classes), r->source, request->documents.size());
    if (!per_document.ok()) return respond(error_response(per_document.error(), m.get()));
    auto ranked = rank_documents(*m->pipeline, *per_document, request->options);
    if (!ranked.ok()) return respond(error_response(ranked.error(), m.get()));
    int64_t tokens = 0;
    std::vector<int64_t> dropped;
    for (const auto& c : *per_document) {
      tokens += c.tokens;
      dropped.push_back(c.tokens_dropped);
    }
    HttpResponse res = json_response(200, cohere ? cohere_body(*ranked, *request, m->name, tokens) : tei_body(*ranked, *request));
    add_dropped_headers(res, dropped);
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

}  // namespace

GB_ROUTE_HANDLER(tei_rerank) {
  (void)params;
  rerank_route(ctx, std::move(req), false, std::move(respond));
}

GB_ROUTE_HANDLER(cohere_rerank) {
  (void)params;
  rerank_route(ctx, std::move(req), true, std::move(respond));
}

}  // namespace glassbox::server
