// Triton's model repository extension: index, load, unload.
#include "server/codec/json_body.h"
#include "server/routes/router.h"

namespace glassbox::server {

namespace {

void load_or_unload(ServerContext& ctx, const std::string& name, bool load, const Responder& respond) {
  if (!valid_model_name(name)) return respond(refuse(RefusalCode::kInvalidRequest, "invalid model name", "model"));
  if (ctx.draining.load()) return respond(draining_refusal());
  auto done = [respond](int status, std::string message) {
    if (status == 200) return respond(json_response(200, nlohmann::json::object()));
    const RefusalCode code = status == 404 ? RefusalCode::kModelNotFound
                             : status == 400 ? RefusalCode::kInvalidRequest
                             : status == 503 ? RefusalCode::kModelUnavailable
                                             : RefusalCode::kInternal;
    respond(refuse(code, std::move(message)));
  };
  if (load) ctx.repository.load(name, done);
  else ctx.repository.unload(name, done);
}

}  // namespace

void repository_index(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) {
  bool ready_only = false;
  if (!req.body.empty()) {
    auto j = parse_json_body(req.body, ctx.options.max_json_depth);
    if (!j.ok()) return respond(error_response(j.error(), nullptr));
    auto ready = optional_bool(*j, "ready");
    if (!ready.ok()) return respond(error_response(ready.error(), nullptr));
    ready_only = ready->value_or(false);
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : ctx.repository.index()) {
    if (ready_only && e.state != "READY") continue;
    nlohmann::ordered_json row{{"name", e.name}};
    if (!e.version.empty()) row["version"] = e.version;
    row["state"] = e.state;
    row["reason"] = e.reason;
    if (!e.warmup.is_null()) row["warmup"] = e.warmup;
    out.push_back(std::move(row));
  }
  respond(json_response(200, out));
}

void repository_load(ServerContext& ctx, HttpRequest&&, const PathParams& params, Responder respond) {
  load_or_unload(ctx, params.get("m"), true, respond);
}

void repository_unload(ServerContext& ctx, HttpRequest&&, const PathParams& params, Responder respond) {
  load_or_unload(ctx, params.get("m"), false, respond);
}

}  // namespace glassbox::server
