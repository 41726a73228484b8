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

const std::string& PathParams::get(std::string_view name) const {
  static const std::string none;
  for (const auto& [k, v] : values)
    if (k == name) return v;
  return none;
}

bool match_path(std::string_view path_template, const std::vector<std::string>& parts, PathParams* params) {
  const auto want = split_path(std::string(path_template));
  if (want.size() != parts.size()) return false;
  PathParams found;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& w = want[i];
    if (w.size() > 2 && w.front() == '{' && w.back() == '}') {
      if (parts[i].empty()) return false;
      found.values.emplace_back(w.substr(1, w.size() - 2), parts[i]);
    } else if (w != parts[i]) {
      return false;
    }
  }
  if (params) *params = std::move(found);
  return true;
}

}  // namespace glassbox::server
