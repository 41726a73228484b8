// JSON request bodies with the server's limits: nesting depth capped while parsing
// (the cap stops the parse, so a body nested 100k deep costs no more than one 64 deep),
// invalid UTF-8, lone surrogates and NaN/Inf literals refused as malformed JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "glassbox/error.h"

namespace glassbox::server {

Result<nlohmann::json> parse_json_body(std::string_view body, int max_depth);

// j[key] as a string / bool / integer if present; errors name the field.
Result<std::optional<std::string>> optional_string(const nlohmann::json& j, const char* key);
Result<std::optional<bool>> optional_bool(const nlohmann::json& j, const char* key);
Result<std::optional<int64_t>> optional_int(const nlohmann::json& j, const char* key);

}  // namespace glassbox::server
