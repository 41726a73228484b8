#include "server/codec/request_fields.h"

namespace glassbox::server {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  if (!parts.empty() && parts.back().empty()) parts.pop_back();  // "/v2/" == "/v2"
  return parts;
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned char c = p[i];
    int n = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return false;
    if (i + n >= s.size()) return false;  // continuation bytes cut off
    for (int k = 1; k <= n; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;  // overlong
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

Result<std::vector<PipelineInput>> parse_texts(const nlohmann::json& value, const char* field, const ServerOptions& options) {
  std::vector<PipelineInput> texts;
  auto bad = [&](const std::string& what) {
    return make_error(ErrorCode::kInvalidArgument, what, std::string("body: \"") + field + "\"");
  };
  if (value.is_string()) {
    texts.push_back({value.get<std::string>(), std::nullopt});
  } else if (value.is_array()) {
    if (value.empty()) return bad("is an empty list");
    if (static_cast<int64_t>(value.size()) > options.max_texts_per_request)
      return bad("has " + std::to_string(value.size()) + " texts, over the server's max_texts_per_request (" +
                 std::to_string(options.max_texts_per_request) + ")");
    for (const auto& v : value) {
      if (!v.is_string()) return bad("must be a string or a list of strings (token-id lists are not accepted)");
      texts.push_back({v.get<std::string>(), std::nullopt});
    }
  } else {
    return bad("must be a string or a list of strings");
  }
  return texts;
}

std::string route_template(const std::string& method, const std::string& path) {
  const auto parts = split_path(path);
  (void)method;
  if (parts.empty()) return "other";
  if (parts[0] == "v2") {
    if (parts.size() == 1) return "/v2";
    if (parts.size() == 3 && parts[1] == "health") return parts[2] == "live" || parts[2] == "ready" ? "/v2/health/" + parts[2] : "other";
    if (parts[1] == "repository") {
      if (parts.size() == 3 && parts[2] == "index") return "/v2/repository/index";
      if (parts.size() == 5 && (parts[4] == "load" || parts[4] == "unload")) return "/v2/repository/models/{m}/" + parts[4];
      return "other";
    }
    if (parts[1] == "models" && parts.size() >= 3) {
      std::string t = "/v2/models/{m}";
      size_t at = 3;
      if (parts.size() > 4 && parts[3] == "versions") {
        t += "/versions/{v}";
        at = 5;
      }
      if (parts.size() == at) return t;
      if (parts.size() == at + 1 && (parts[at] == "ready" || parts[at] == "infer" || parts[at] == "explain")) return t + "/" + parts[at];
    }
    return "other";
  }
  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "embeddings") return "/v1/embeddings";
  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "rerank") return "/v1/rerank";
  static const char* tei[] = {"embed", "predict", "rerank", "tokenize", "decode", "info", "health", "metrics"};
  if (parts.size() == 1)
    for (const char* r : tei)
      if (parts[0] == r) return "/" + parts[0];
  return "other";
}

}  // namespace glassbox::server
