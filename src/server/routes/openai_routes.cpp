// OpenAI-compatible POST /v1/embeddings. The official client asks for
// encoding_format "base64" (little-endian float32) unless told otherwise.
#include <cstring>

#include "server/codec/json_body.h"
#include "server/routes/embed_request.h"
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

}  // namespace

void openai_embeddings(ServerContext& ctx, HttpRequest&& req, const PathParams&, Responder respond) {
  using C = RefusalCode;
  auto body = parse_json_body(req.body, ctx.options.max_json_depth);
  if (!body.ok()) return respond(error_response(body.error(), nullptr));
  auto model_name = optional_string(*body, "model");
  if (!model_name.ok() || !*model_name) return respond(refuse(C::kInvalidRequest, "\"model\" (a string) is required", "model"));
  if (!valid_model_name(**model_name)) return respond(refuse(C::kInvalidRequest, "invalid model name", "model"));
  ModelLookup look = ctx.repository.get(**model_name);
  if (!look.model) return respond(lookup_refusal(look));
  if (!look.model->is_embedder())
    return respond(refuse(C::kInvalidRequest, "model '" + **model_name + "' is not an embedding model", "model"));
  if (look.model->is_sparse())
    return respond(refuse(C::kInvalidRequest, "model '" + **model_name + "' gives sparse vectors: use POST /embed_sparse", "model"));
  if (look.model->pipeline->decisions().multi_vector)
    return respond(refuse(C::kInvalidRequest, "model '" + **model_name + "' gives one vector per token (ColBERT): use POST /embed_multi",
                          "model"));
  if (auto no = refuse_undeclared_head(*look.model, "dense")) return respond(refuse(std::move(*no)));
  if (!body->contains("input")) return respond(refuse(C::kInvalidRequest, "\"input\" is required", "input"));
  auto inputs = parse_texts((*body)["input"], "input", ctx.options);
  if (!inputs.ok()) return respond(error_response(inputs.error(), nullptr));
  auto format = optional_string(*body, "encoding_format");
  if (!format.ok()) return respond(error_response(format.error(), nullptr));
  const std::string fmt = format->value_or("float");
  if (fmt != "float" && fmt != "base64")
    return respond(refuse(C::kInvalidRequest, "encoding_format must be \"float\" or \"base64\"", "encoding_format"));
  // "dimensions" is OpenAI's (Matryoshka: the first N values, then normalized when the model normalizes);
  // "overflow", "truncate", "truncation_direction" and "prompt_name" are glassbox's extensions (the openai
  // client sends them with extra_body / a spread body).
  TextJob job;
  Status st = read_embed_fields(*body, false, *inputs, job);
  if (!st.ok()) return respond(error_response(st.error(), nullptr));
  job.task = PipelineTask::kEmbed;
  job.inputs = std::move(inputs).value();
  auto m = look.model;
  job.done = [respond, m, fmt](Result<TextResults> r) {
    if (!r.ok()) return respond(embed_error_response(r.error(), *m, "input"));
    ojson data = ojson::array();
    int64_t tokens = 0;
    std::vector<int64_t> dropped;
    for (size_t i = 0; i < r->embeddings.size(); ++i) {
      const auto& e = r->embeddings[i];
      ojson row{{"object", "embedding"}, {"index", i}};
      if (fmt == "base64") row["embedding"] = base64_floats(e.vector);
      else row["embedding"] = e.vector;
      data.push_back(std::move(row));
      tokens += e.tokens;
      dropped.push_back(e.tokens_dropped);
    }
    ojson out{{"object", "list"}, {"data", std::move(data)}, {"model", m->name},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
    HttpResponse res = json_response(200, out);
    add_dropped_headers(res, dropped);
    respond(std::move(res));
  };
  WorkItem item = make_work(ctx, m, std::move(job), req);
  submit_work(ctx, std::move(item), respond);
}

}  // namespace glassbox::server
