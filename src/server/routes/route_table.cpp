#include "server/routes/route_table.h"

#include "server/routes/router.h"

namespace glassbox::server {

// Declared here rather than in router.h's list: only this table names it (retrieval_routes.cpp defines it).
GB_ROUTE_HANDLER(tei_embed_multi);

namespace {

using P = Protocol;

// The one list of routes. Order matters only between templates that match the same path (none do today).
const std::vector<Route> kRoutes = {
    {"GET", "/v2", P::kOip, oip_server_metadata, "server metadata: version, extensions, CPU features and kernels"},
    {"GET", "/v2/health/live", P::kOip, oip_health_live, "liveness: 200 as soon as the port is open"},
    {"GET", "/v2/health/ready", P::kOip, oip_health_ready, "readiness: 200 when a model serves and the server is not draining, else 503"},
    {"GET", "/v2/models/{m}", P::kOip, oip_model_metadata, "model metadata (variable dims = -1)"},
    {"GET", "/v2/models/{m}/versions/{v}", P::kOip, oip_model_metadata, "metadata of one version"},
    {"GET", "/v2/models/{m}/ready", P::kOip, oip_model_ready, "model readiness: 200 / 503; 404 unknown"},
    {"GET", "/v2/models/{m}/versions/{v}/ready", P::kOip, oip_model_ready, "readiness of one version"},
    {"POST", "/v2/models/{m}/infer", P::kOip, oip_model_infer, "inference, JSON or binary tensors; text models take BYTES \"text\" (a heads model: tensors per head)"},
    {"POST", "/v2/models/{m}/versions/{v}/infer", P::kOip, oip_model_infer, "inference on one version"},
    {"GET", "/v2/models/{m}/explain", P::kOip, oip_model_explain, "the model's declared decisions and engine options + the server's options"},
    {"GET", "/v2/models/{m}/versions/{v}/explain", P::kOip, oip_model_explain, "explain of one version"},
    {"POST", "/v2/repository/index", P::kRepository, repository_index, "Triton repository index: every model with state and reason"},
    {"POST", "/v2/repository/models/{m}/load", P::kRepository, repository_load, "load or reload a model from the repository"},
    {"POST", "/v2/repository/models/{m}/unload", P::kRepository, repository_unload, "unload a model"},
    {"POST", "/embed", P::kTei, tei_embed, "TEI embeddings"},
    {"POST", "/predict", P::kTei, tei_predict, "TEI classification (texts or pairs)"},
    {"POST", "/tokenize", P::kTei, tei_tokenize, "TEI tokenization (ids, tokens, byte offsets)"},
    {"POST", "/decode", P::kTei, tei_decode, "TEI decoding of ids"},
    {"GET", "/info", P::kTei, tei_info, "TEI model info"},
    {"GET", "/health", P::kTei, tei_health, "TEI health: 200 / 503"},
    {"POST", "/v1/embeddings", P::kOpenai, openai_embeddings, "OpenAI embeddings (float or base64)"},
    {"POST", "/v1/chat/completions", P::kOpenai, openai_chat_completions, "OpenAI chat completions (generation models; SSE with stream)"},
    {"POST", "/v1/completions", P::kOpenai, openai_completions, "OpenAI completions (generation models; SSE with stream)"},
    {"GET", "/v1/models", P::kOpenai, openai_models, "OpenAI model list: the READY models"},
    {"POST", "/generate", P::kTei, tgi_generate, "TGI generate (generation models)"},
    {"POST", "/generate_stream", P::kTei, tgi_generate_stream, "TGI generate, streamed as SSE"},
    {"POST", "/rerank", P::kTei, tei_rerank, "TEI rerank: a cross-encoder scores (query, text) pairs"},
    {"POST", "/v1/rerank", P::kOpenai, cohere_rerank, "rerank in Cohere's and Jina's shape"},
    {"POST", "/embed_sparse", P::kTei, tei_embed_sparse, "TEI sparse embeddings (SPLADE models, a heads model's sparse head): [{index, value}] per text"},
    {"POST", "/similarity", P::kTei, tei_similarity, "TEI similarity: a source sentence against sentences, the model's declared similarity_fn_name"},
    {"POST", "/embed_all", P::kTei, tei_embed_all, "TEI token-level vectors (the model's last hidden state per token)"},
    {"POST", "/embed_multi", P::kTei, tei_embed_multi, "multi-vector embeddings (ColBERT models, a heads model's multi_vector head): per text, one vector per kept token"},
    {"GET", "/metrics", P::kMetrics, metrics_scrape, "Prometheus metrics (text format 0.0.4)"},
};

}  // namespace

const std::vector<Route>& routes() { return kRoutes; }

RouteMatch match_route(std::string_view method, const std::string& path) {
  const auto parts = split_path(path);
  RouteMatch out;
  const Route* path_match = nullptr;
  for (const auto& r : routes()) {
    PathParams params;
    if (!match_path(r.path, parts, &params)) continue;
    if (method == r.method) {
      out.route = &r;
      out.params = std::move(params);
      return out;
    }
    if (!path_match) path_match = &r;
    if (out.allowed.find(r.method) == std::string::npos) out.allowed += (out.allowed.empty() ? "" : ", ") + std::string(r.method);
  }
  if (path_match) {
    out.route = path_match;
    out.wrong_method = true;
  }
  return out;
}

Protocol protocol_for_path(const std::string& path) {
  const auto parts = split_path(path);
  Protocol best = Protocol::kOip;
  size_t best_len = 0;
  for (const auto& r : routes()) {
    if (match_path(r.path, parts, nullptr)) return r.protocol;  // a route's path: its protocol
    const auto want = split_path(r.path);
    size_t n = 0;
    auto same = [&](size_t i) { return want[i] == parts[i] || (want[i].front() == '{' && !parts[i].empty()); };
    while (n < want.size() && n < parts.size() && same(n)) ++n;
    if (n > best_len) {
      best_len = n;
      best = r.protocol;
    }
  }
  return best;
}

nlohmann::ordered_json routes_json() {
  auto out = nlohmann::ordered_json::array();
  for (const auto& r : routes())
    out.push_back({{"method", r.method}, {"path", r.path}, {"protocol", protocol_name(r.protocol)}, {"what", r.what}});
  return out;
}

std::string routes_markdown() {
  std::string s = "| method | path | protocol | what |\n|---|---|---|---|\n";
  for (const auto& r : routes())
    s += std::string("| ") + r.method + " | `" + r.path + "` | " + protocol_name(r.protocol) + " | " + r.what + " |\n";
  return s;
}

}  // namespace glassbox::server
