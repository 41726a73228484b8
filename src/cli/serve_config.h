// The server's configuration as `serve` and `explain --serve` read it: a --config file
// {"server": {...}, "session": {...}} under the command-line flags (flags win).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_common.h"
#include "diag/explain.h"
#include "server/server.h"

namespace glassbox::cli {

inline void apply_serve_config_file(const std::string& verb, const std::string& path, server::ServeConfig& config) {
  std::ifstream in(path);
  if (!in) fail(verb, make_error(ErrorCode::kNotFound, "cannot read config file", path));
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) fail(verb, make_error(ErrorCode::kInvalidArgument, "config is not a JSON object", path));
  if (j.contains("server")) {
    Status s = server::apply_server_config(j["server"], config.server, config.sources);
    if (!s.ok()) fail(verb, std::move(s).take_error().with_where(path));
    j.erase("server");
  }
  diag::EffectiveOptions engine;
  Status s = diag::apply_config(j, engine);
  if (!s.ok()) fail(verb, std::move(s).take_error().with_where(path));
  config.session = engine.session;
  for (const auto& [k, v] : engine.sources) config.sources[k] = v;
}

}  // namespace glassbox::cli
