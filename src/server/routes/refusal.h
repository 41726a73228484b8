// A refusal rendered in the calling protocol's shape. Routes answer refuse(code, message,
// param) (server/http/http_types.h); the route table knows each route's protocol and renders the
// body once, just before the response is sent:
//   oip, repository, metrics  {"error": message}                        (KServe v2 / Triton)
//   tei                       {"error": message, "error_type": type}    (TEI and TGI)
//   openai                    {"error": {"message", "type", "param", "code"}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "glassbox/error.h"
#include "server/http/http_types.h"

namespace glassbox::server {

struct LoadedModel;
struct ModelLookup;

enum class Protocol { kOip, kTei, kOpenai, kRepository, kMetrics };
const char* protocol_name(Protocol p);

// OpenAI's error object {"error": {"message", "type", "param", "code"}} (param null when none).
nlohmann::ordered_json openai_error_body(const Refusal& r);
// TEI's {"error", "error_type"}; OIP's {"error"}.
nlohmann::ordered_json tei_error_body(const Refusal& r);
nlohmann::ordered_json oip_error_body(const Refusal& r);
// Fills r.body from r.refusal in the protocol's shape (nothing to do when r is no refusal or
// already has a body).
void render_refusal(HttpResponse& r, Protocol p);

// An error of parsing, validation or a model's run as a refusal: the code by ErrorCode
// (invalid argument / unsupported 400, not found 404, limit 413, else 500), the param from the
// error's `where` ("body: \"inputs\"" -> "inputs"), the message as a client may see it.
Refusal refusal_from_error(const Error& e, const LoadedModel* model);
// A failed model lookup (404 unknown, 503 not serving, 400 a bad name or choice).
HttpResponse lookup_refusal(const ModelLookup& look);

}  // namespace glassbox::server
