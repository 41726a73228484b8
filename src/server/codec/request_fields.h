// Request pieces every protocol shares, free of models and sockets (so they can be fuzzed
// alone): path segments, path templates, UTF-8 validation, text lists.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/pipeline.h"
#include "server/server_options.h"

namespace glassbox::server {

// "/v2/models/m/infer" -> {"v2", "models", "m", "infer"} (a trailing '/' is ignored).
std::vector<std::string> split_path(const std::string& path);
// The values a path template's "{name}" segments took: "/v2/models/{m}/infer" on
// "/v2/models/langid/infer" -> m = langid.
struct PathParams {
  std::vector<std::pair<std::string, std::string>> values;
  // The value of {name}; empty when the template has no such segment.
  const std::string& get(std::string_view name) const;
};
// True if the path's segments match the template's: literal segments equal, each "{name}" one
// non-empty segment (recorded in params when given).
bool match_path(std::string_view path_template, const std::vector<std::string>& parts, PathParams* params);
// True if the bytes are valid UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s);
// Texts of a TEI/OpenAI "inputs"/"input" field: a string or a non-empty list of strings,
// at most max_texts_per_request.
Result<std::vector<PipelineInput>> parse_texts(const nlohmann::json& value, const char* field, const ServerOptions& options);

}  // namespace glassbox::server
