#include "server/codec/json_body.h"

namespace glassbox::server {
namespace {
struct TooDeep {};
}  // namespace

Result<nlohmann::json> parse_json_body(std::string_view body, int max_depth) {
  if (body.empty())
    return make_error(ErrorCode::kInvalidArgument, "request body is empty", "body", "send a JSON object");
  nlohmann::json::parser_callback_t cb = [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > max_depth) throw TooDeep{};
    return true;
  };
  try {
    auto j = nlohmann::json::parse(body.begin(), body.end(), cb);
    if (!j.is_object()) return make_error(ErrorCode::kInvalidArgument, "request body is not a JSON object", "body");
    return j;
  } catch (const TooDeep&) {
    return make_error(ErrorCode::kInvalidArgument, "JSON nesting deeper than max_json_depth (" + std::to_string(max_depth) + ")",
                      "body", "flatten the data (OIP accepts flat data with a shape)");
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() names the byte position and the problem (invalid literal, ill-formed UTF-8, lone surrogate).
    return make_error(ErrorCode::kInvalidArgument, std::string("malformed JSON: ") + e.what(), "body",
                      "send valid JSON (UTF-8; NaN and Infinity are not JSON)");
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e999) is valid JSON that nlohmann refuses to hold (406): before this
    // catch it escaped and terminated the server (found by tests/fuzz/fuzz_server_request).
    return make_error(ErrorCode::kInvalidArgument, std::string("a number in the JSON is out of range: ") + e.what(), "body",
                      "send numbers within float64's range (|x| < 1.8e308)");
  }
}

Result<std::optional<std::string>> optional_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return make_error(ErrorCode::kInvalidArgument, std::string("\"") + key + "\" must be a string", "body");
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::optional<bool>> optional_bool(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return make_error(ErrorCode::kInvalidArgument, std::string("\"") + key + "\" must be true or false", "body");
  return std::optional<bool>(it->get<bool>());
}

Result<std::optional<int64_t>> optional_int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer())
    return make_error(ErrorCode::kInvalidArgument, std::string("\"") + key + "\" must be an integer", "body");
  return std::optional<int64_t>(it->get<int64_t>());
}

}  // namespace glassbox::server
