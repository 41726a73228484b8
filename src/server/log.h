// The server's logs. Events (loads, swaps, drains, dropped work) go to stderr; the access log
// (--access-log: one line per answered request) to stdout. --log-format says how each line is
// written (ServerOptions log_format):
//   text  "2026-12-05T12:00:00.123Z glassbox serve: message"
//   json  one object per line: {"time", "type": "event"|"access", "level", "message", ...}
// Every line about a request carries its request_id and trace_id (RequestMeta).
#pragma once

#include <string>

#include "glassbox/error.h"
#include "server/http/http_types.h"

namespace glassbox::server {

enum class LogFormat { kText, kJson };
// "text" or "json"; anything else is an error naming the choices.
Result<LogFormat> parse_log_format(const std::string& name);
// Set once when the server starts (before any line is written).
void set_log_format(LogFormat format);

// A server event.
void log_line(const std::string& message);
// An event of one request: the line carries its request id, trace id and model.
void log_request_event(const std::string& message, const RequestMeta& meta);
// The access log line of an answered request.
void log_access(const RequestMeta& meta, const HttpResponse& response, double seconds);

}  // namespace glassbox::server
