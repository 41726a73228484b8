// OpenAI-compatible POST /v1/embeddings. The official client asks for
// encoding_format "base64" (little-endian float32) unless told otherwise.
#include <cstring>

#include "server/codec/json_body.h"
#include "server/routes/router.h"

namespace glassbox::server {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string base64_floats(const std::vector<float>& v) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());  // little-endian hosts only (x86-64, arm64)
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = static_cast<unsigned char>(bytes[i]);
    const uint32_t b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const uint32_t b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const uint32_t n = (b0 << 16) | (b1 << 8) | b2;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

HttpResponse openai_error(int status, const std::string& message) {
  // {"error": {...}} is what OpenAI clients parse; "message" carries the text.
  HttpResponse r;
  r.status = status;
  r.body = json{{"error", {{"message", message}, {"type", status >= 500 ? "server_error" : "invalid_request_error"},
                           {"code", status}}}}
               .dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

}  // namespace

void route_openai(ServerContext& ctx, HttpRequest&& req, Responder respond) {
  if (req.method != "POST") return respond(openai_error(405, "method " + req.method + " is not allowed on /v1/embeddings"));
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(openai_error(400, body.error().to_string()));
  auto model_name = optional_string(*body, "model");
  if (!model_name.ok() || !*model_name) return respond(openai_error(400, "\"model\" (a string) is required"));
  if (!valid_model_name(**model_name)) return respond(openai_error(400, "invalid model name"));
  ModelLookup look = ctx.repository.get(**model_name);
  if (!look.model) return respond(openai_error(look.status, look.message));
  if (!look.model->is_embedder())
    return respond(openai_error(400, "model '" + **model_name + "' is not an embedding model"));
  if (!body->contains("input")) return respond(openai_error(400, "\"input\" is required"));
  auto inputs = parse_texts((*body)["input"], "input", ctx.options);
  if (!inputs.ok()) return respond(openai_error(400, inputs.error().to_string()));
  auto format = optional_string(*body, "encoding_format");
  if (!format.ok()) return respond(openai_error(400, format.error().what));
  const std::string fmt = format->value_or("float");
  if (fmt != "float" && fmt != "base64") return respond(openai_error(400, "encoding_format must be \"float\" or \"base64\""));
  if (body->contains("dimensions") && !(*body)["dimensions"].is_null())
    return respond(openai_error(400, "\"dimensions\" is not supported: the model's vectors are returned whole"));
  // "truncate" is glassbox's extension (the openai client sends it with extra_body / a spread body).
  auto truncate = optional_bool(*body, "truncate");
  if (!truncate.ok()) return respond(openai_error(400, truncate.error().what));
  for (auto& in : *inputs) in.allow_truncation = truncate->value_or(false);
  TextJob job;
  job.task = PipelineTask::kEmbed;
  job.inputs = std::move(inputs).value();
  auto m = look.model;
  job.done = [respond, m, fmt](Result<TextResults> r) {
    if (!r.ok()) {
      Error e = r.error();
      if (e.code == ErrorCode::kLimitExceeded)
        e.fix = "send \"truncate\": true to drop the tokens past the limit (the response reports how many), or shorten the text";
      return respond(openai_error(http_status(e.code), client_message(e, *m)));
    }
    ojson data = ojson::array();
    int64_t tokens = 0, dropped = 0;
    for (size_t i = 0; i < r->embeddings.size(); ++i) {
      const auto& e = r->embeddings[i];
      ojson row{{"object", "embedding"}, {"index", i}};
      if (fmt == "base64") row["embedding"] = base64_floats(e.vector);
      else row["embedding"] = e.vector;
      data.push_back(std::move(row));
      tokens += e.tokens;
      dropped += e.tokens_dropped;
    }
    ojson out{{"object", "list"}, {"data", std::move(data)}, {"model", m->name},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
    HttpResponse res = json_response(200, out);
    add_truncation_header(res, dropped);
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

}  // namespace glassbox::server
