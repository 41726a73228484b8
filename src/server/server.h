// `glassbox serve`: the HTTP front end, the model repository and the scheduler wired
// together, with the process lifecycle: live as soon as the port is open, ready after every
// model's first load and warm-up, SIGTERM/SIGINT drains (readiness 503 at once, new work
// 503, in-flight requests finish within drain_timeout_s, exit 0), a second signal exits at once.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "glassbox/error.h"
#include "glassbox/session.h"
#include "server/server_options.h"

namespace glassbox::server {

struct ServeConfig {
  ServerOptions server;
  SessionOptions session;
  std::map<std::string, std::string> sources;  // "server.port" -> "flag" / "file"
};

// Serves until a signal ends it; returns the process exit code (0 = drained cleanly).
// Prints "listening on HOST:PORT" on stderr once the port is open.
Result<int> serve(const ServeConfig& config);

}  // namespace glassbox::server
