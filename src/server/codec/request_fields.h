// Request pieces every protocol shares, free of models and sockets (so they can be fuzzed
// alone): path segments, route templates for metric labels, UTF-8 validation, text lists.
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
// The route template of a path (a bounded label set): "/v2/models/{m}/infer", "/predict", "other".
std::string route_template(const std::string& method, const std::string& path);
// True if the bytes are valid UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
bool valid_utf8(std::string_view s);
// Texts of a TEI/OpenAI "inputs"/"input" field: a string or a non-empty list of strings,
// at most max_texts_per_request.
Result<std::vector<PipelineInput>> parse_texts(const nlohmann::json& value, const char* field, const ServerOptions& options);

}  // namespace glassbox::server
