// Triton's model repository extension: index, load, unload.
#include "server/codec/json_body.h"
#include "server/routes/router.h"

namespace glassbox::server {

void route_repository(ServerContext& ctx, HttpRequest&& req, const std::vector<std::string>& parts, Responder respond) {
  // v2 repository index | v2 repository models NAME load|unload
  if (req.method != "POST") return respond(json_error(405, "repository routes take POST"));
  if (parts.size() == 3 && parts[2] == "index") {
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
    return respond(json_response(200, out));
  }
  if (parts.size() == 5 && parts[2] == "models" && (parts[4] == "load" || parts[4] == "unload")) {
    const std::string& name = parts[3];
    if (!valid_model_name(name)) return respond(json_error(400, "invalid model name"));
    if (ctx.draining.load()) return respond(json_error(503, "server is shutting down"));
    auto done = [respond](int status, std::string message) {
      respond(status == 200 ? json_response(200, nlohmann::json::object()) : json_error(status, message));
    };
    if (parts[4] == "load") ctx.repository.load(name, done);
    else ctx.repository.unload(name, done);
    return;
  }
  respond(json_error(404, "no route for " + req.method + " " + req.path.substr(0, 200)));
}

}  // namespace glassbox::server
