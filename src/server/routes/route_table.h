// Every HTTP route of `glassbox serve`, declared once: method, path template, protocol, handler
// and a one-line description. Dispatch, the `route` label of the request metrics (the path
// template), the protocol a refusal is rendered in (server/routes/refusal.h), `glassbox explain
// --serve` and the routes table of docs/serving.md (checked by tests/server/test_routes.py) all
// read this table.
//
// Adding a route is one entry in route_table.cpp's kRoutes plus its handler:
//   {"POST", "/v1/chat/completions", Protocol::kOpenai, openai_chat_completions, "OpenAI chat completions"},
// where the handler is `void openai_chat_completions(ServerContext&, HttpRequest&&, const PathParams&, Responder)`
// (declared in router.h or the protocol's own header), and a row in docs/serving.md's routes table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/codec/request_fields.h"
#include "server/http/http_types.h"
#include "server/routes/refusal.h"

namespace glassbox::server {

struct ServerContext;

using RouteHandler = void (*)(ServerContext& ctx, HttpRequest&& req, const PathParams& params, Responder respond);

struct Route {
  const char* method;  // "GET" or "POST" (a path served under two methods is two entries)
  const char* path;    // template: literal segments and "{name}" segments; also the metric label
  Protocol protocol;   // the shape of its responses and refusals
  RouteHandler handler;
  const char* what;    // one line: docs/serving.md and explain
};

const std::vector<Route>& routes();

struct RouteMatch {
  const Route* route = nullptr;  // null: no route has this path
  PathParams params;
  bool wrong_method = false;     // the path is a route's, the method is not: `allowed` lists the methods
  std::string allowed;
};
RouteMatch match_route(std::string_view method, const std::string& path);

// The protocol a refusal on `path` is rendered in: its route's; for a path that is no route,
// the protocol of the routes sharing its longest run of leading segments (/v1/x: openai), else OIP.
Protocol protocol_for_path(const std::string& path);

// [{"method", "path", "protocol", "what"}] in table order (`glassbox explain --serve --json`).
nlohmann::ordered_json routes_json();
// The same as the Markdown table of docs/serving.md.
std::string routes_markdown();

}  // namespace glassbox::server
