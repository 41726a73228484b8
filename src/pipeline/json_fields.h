// Reading the JSON files of a model directory: a field that is absent (or null) is nullopt,
// a field of the wrong type is an error naming the file and the field, never ignored.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

#include "glassbox/error.h"

namespace glassbox::pipeline {

// The object in `path`; absent: null when !required, else an error naming the file.
inline Result<nlohmann::json> read_json(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (!required) return nlohmann::json(nullptr);
    return make_error(ErrorCode::kNotFound, "required file is missing", path,
                      "a model directory needs model.onnx (or onnx/model.onnx), tokenizer.json and config.json");
  }
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", path);
  return j;
}

template <class T>
constexpr const char* json_type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else return "an integer";
}

template <class T>
Result<std::optional<T>> get_opt(const nlohmann::json& j, const char* key, const std::string& file) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::optional<T>();
  const nlohmann::json& v = j[key];
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) ok = v.is_string();
  else if constexpr (std::is_same_v<T, bool>) ok = v.is_boolean();
  else if constexpr (std::is_floating_point_v<T>) ok = v.is_number();
  else if constexpr (std::is_unsigned_v<T>) ok = v.is_number_unsigned();
  else ok = v.is_number_integer();
  if (!ok)
    return make_error(ErrorCode::kInvalidModel,
                      std::string("field '") + key + "' must be " + json_type_name<T>() + ", got " + v.dump(), file,
                      std::string("fix the value of \"") + key + "\"");
  return std::optional<T>(v.get<T>());
}

}  // namespace glassbox::pipeline
