#include "server/routes/refusal.h"

#include "server/repository/repository.h"

namespace glassbox::server {

using ojson = nlohmann::ordered_json;

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kOip: return "oip";
    case Protocol::kTei: return "tei";
    case Protocol::kOpenai: return "openai";
    case Protocol::kRepository: return "repository";
    case Protocol::kMetrics: return "metrics";
  }
  return "oip";
}

ojson openai_error_body(const Refusal& r) {
  const RefusalInfo& info = refusal_info(r.code);
  ojson e{{"message", r.message}, {"type", info.openai_type}};
  e["param"] = r.param.empty() ? ojson(nullptr) : ojson(r.param);
  e["code"] = r.detail.empty() ? info.name : r.detail.c_str();
  return ojson{{"error", std::move(e)}};
}

ojson tei_error_body(const Refusal& r) {
  return ojson{{"error", r.message}, {"error_type", refusal_info(r.code).tei_type}};
}

ojson oip_error_body(const Refusal& r) { return ojson{{"error", r.message}}; }

void render_refusal(HttpResponse& r, Protocol p) {
  if (!r.refusal || !r.body.empty()) return;
  const ojson body = p == Protocol::kOpenai ? openai_error_body(*r.refusal)
                     : p == Protocol::kTei  ? tei_error_body(*r.refusal)
                                            : oip_error_body(*r.refusal);
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// `body: "inputs"` / `body: "inputs"[3]` -> inputs; "parameters" -> parameters; "" otherwise.
std::string param_of(const std::string& where) {
  const size_t q = where.find('"');
  if (q != std::string::npos) {
    const size_t end = where.find('"', q + 1);
    if (end != std::string::npos) return where.substr(q + 1, end - q - 1);
  }
  for (const char* field : {"inputs", "outputs", "parameters", "headers"})
    if (where == field) return field;
  return {};
}

}  // namespace

Refusal refusal_from_error(const Error& e, const LoadedModel* model) {
  Refusal r;
  switch (e.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kUnsupported: r.code = RefusalCode::kInvalidRequest; break;
    case ErrorCode::kNotFound: r.code = RefusalCode::kModelNotFound; break;
    case ErrorCode::kLimitExceeded: r.code = RefusalCode::kTooLarge; break;
    default: r.code = RefusalCode::kInternal; break;
  }
  r.message = model ? client_message(e, *model) : e.to_string();
  r.param = param_of(e.where);
  return r;
}

HttpResponse lookup_refusal(const ModelLookup& look) {
  const RefusalCode code = look.status == 404   ? RefusalCode::kModelNotFound
                           : look.status == 503 ? RefusalCode::kModelUnavailable
                           : look.status == 400 ? RefusalCode::kInvalidRequest
                                                : RefusalCode::kInternal;
  return refuse(code, look.message, "model");
}

}  // namespace glassbox::server
