// The one mechanism behind every options table (SessionOptions, LoadOptions, EncodeOptions,
// UnpadOptions and ProcessOptions in diag/explain.cpp; ServerOptions in server/server_options.cpp):
// a row per field with its value as text, a setter from a config file's JSON, a copier, and the
// field's reason and risk. `explain` prints the rows, config files set fields through them and a
// static_assert on the struct's field count keeps each table complete.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox {

// A list as explain prints it: "[a, b]".
inline std::string list_text(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + "]";
}

template <class S>
struct OptionField {
  const char* name;
  std::function<std::string(const S&)> get;            // the value as explain prints it
  std::function<void(S&, const nlohmann::json&)> set;  // throws nlohmann::json::exception on a wrong type
  const char* reason;
  const char* risk;
  std::function<void(const S&, S&)> copy = nullptr;  // this field from one struct into another (GB_OPTION_FIELD sets it)
};

// One row: FIELD is a member of S, TO_TEXT turns its value into explain's text.
#define GB_OPTION_FIELD(S, field, to_text, reason, risk)                                                  \
  ::glassbox::OptionField<S> {                                                                             \
    #field, [](const S& o) { return to_text(o.field); },                                                  \
        [](S& o, const nlohmann::json& j) { j.get_to(o.field); }, reason, risk,                           \
        [](const S& from, S& to) { to.field = from.field; }                                               \
  }

// Sets each key of a config file's section `component` (a JSON object) through its row, and records
// sources[component + "." + key] = "file". An unknown key or a value of the wrong type is an error
// naming it, with `fix` (where the fields are listed).
template <class S>
Status apply_option_section(const char* component, const nlohmann::json& section, const std::vector<OptionField<S>>& fields,
                            S& target, std::map<std::string, std::string>& sources, const char* fix) {
  if (!section.is_object())
    return make_error(ErrorCode::kInvalidArgument, std::string("config section \"") + component + "\" must be an object",
                      "config", fix);
  for (const auto& [key, value] : section.items()) {
    const OptionField<S>* field = nullptr;
    for (const auto& f : fields)
      if (key == f.name) field = &f;
    if (!field)
      return make_error(ErrorCode::kInvalidArgument, "unknown key \"" + key + "\"", std::string("config: ") + component, fix);
    try {
      field->set(target, value);
    } catch (const nlohmann::json::exception& e) {
      return make_error(ErrorCode::kInvalidArgument, "wrong type for \"" + key + "\": " + e.what(),
                        std::string("config: ") + component, fix);
    }
    sources[std::string(component) + "." + key] = "file";
  }
  return {};
}

}  // namespace glassbox
