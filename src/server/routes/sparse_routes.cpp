// TEI's POST /embed_sparse on a sparse (SPLADE) embedding model, or the sparse head of a model with declared
// heads (glassbox.json "heads", BGE-M3's lexical weights): {inputs, truncate?,
// truncation_direction?, prompt_name?, model?} -> one list of {index, value} per input (the
// nonzero vocabulary entries, indices ascending; docs/retrieval.md "Sparse embeddings").
#include "glassbox/embedding_heads.h"
#include "glassbox/pipeline.h"
#include "server/codec/json_body.h"
#include "server/routes/embed_request.h"
#include "server/routes/router.h"

namespace glassbox::server {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

ModelLookup pick_sparse_model(ServerContext& ctx, const std::optional<std::string>& name) {
  ModelLookup l;
  if (name) {
    if (!valid_model_name(*name)) return {nullptr, 400, "invalid model name"};
    l = ctx.repository.get(*name);
  } else {
    l = ctx.repository.default_text_model(PipelineTask::kEmbed);
  }
  if (!l.model) return l;
  if (l.model->is_embedder() && embedding_heads(*l.model->pipeline)) {  // the sparse head of a heads model
    if (auto no = refuse_undeclared_head(*l.model, "sparse")) return {nullptr, 400, no->message};
    return l;
  }
  if (!l.model->is_sparse())
    return {nullptr, 400,
            "model '" + l.model->name + "' does not give sparse vectors (no SpladePooling module, no \"sparse\" in glassbox.json)" +
                (l.model->is_embedder() ? ": use /embed" : "")};
  return l;
}

// The request's texts with its truncation and prompt choices.
Result<std::vector<PipelineInput>> sparse_inputs(const json& body, const ServerOptions& o) {
  if (!body.contains("inputs")) return make_error(ErrorCode::kInvalidArgument, "body has no \"inputs\"", "body: \"inputs\"");
  GB_ASSIGN_OR_RETURN(auto inputs, parse_texts(body["inputs"], "inputs", o));
  GB_ASSIGN_OR_RETURN(auto truncate, optional_bool(body, "truncate"));
  GB_ASSIGN_OR_RETURN(auto direction, optional_string(body, "truncation_direction"));
  GB_ASSIGN_OR_RETURN(auto prompt_name, optional_string(body, "prompt_name"));
  if (direction && *direction != "Left" && *direction != "Right")
    return make_error(ErrorCode::kInvalidArgument, "\"truncation_direction\" must be \"Left\" or \"Right\"",
                      "body: \"truncation_direction\"");
  for (auto& in : inputs) {
    in.allow_truncation = truncate.value_or(false);
    in.truncation_direction = direction && *direction == "Left" ? Side::kLeft : Side::kRight;
    in.prompt_name = prompt_name;
  }
  return inputs;
}

}  // namespace

GB_ROUTE_HANDLER(tei_embed_sparse) {
  (void)params;
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  auto name = optional_string(*body, "model");
  if (!name.ok()) return respond(error_response(name.error(), nullptr));
  ModelLookup look = pick_sparse_model(ctx, *name);
  if (!look.model) return respond(lookup_refusal(look));
  auto inputs = sparse_inputs(*body, ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  auto m = look.model;
  TextJob job;
  job.task = PipelineTask::kEmbed;
  job.inputs = std::move(inputs).value();
  if (embedding_heads(*m->pipeline)) job.heads = {"sparse"};  // one run gives every head; this answer reads one
  job.done = [respond, m](Result<TextResults> r) {
    if (r.ok() && !r->heads.empty())
      if (Status st = take_head(*r, "sparse"); !st.ok()) r = std::move(st).take_error();
    if (!r.ok()) {
      Error e = r.error();
      if (e.code == ErrorCode::kLimitExceeded)
        e.fix = "send \"truncate\": true to drop the tokens past the limit (the response reports how many), or shorten the text";
      return respond(e.code == ErrorCode::kLimitExceeded ? refuse(RefusalCode::kTooLarge, client_message(e, *m), "inputs")
                                                         : error_response(e, m.get()));
    }
    ojson out = ojson::array();
    int64_t dropped = 0;
    for (const auto& e : r->embeddings) {
      ojson entries = ojson::array();
      for (size_t k = 0; k < e.indices.size(); ++k) entries.push_back({{"index", e.indices[k]}, {"value", e.vector[k]}});
      out.push_back(std::move(entries));
      dropped += e.tokens_dropped;
    }
    HttpResponse res = json_response(200, out);
    add_truncation_header(res, dropped);
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

}  // namespace glassbox::server
