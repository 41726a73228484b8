// Request identity for logs and tracing: the request id (X-Request-Id, or generated) and the
// W3C Trace Context `traceparent` header (https://www.w3.org/TR/trace-context/), validated as
// the spec says; an invalid header is ignored and a new trace begins.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace glassbox::server {

struct TraceParent {
  std::string version;    // 2 lowercase hex, not "ff"
  std::string trace_id;   // 32 lowercase hex, not all zeros
  std::string parent_id;  // 16 lowercase hex, not all zeros
  std::string flags;      // 2 lowercase hex
};

// The header's fields, or nullopt when it breaks the spec: wrong length or separators, upper-case
// or non-hex digits, version ff, an all-zero trace or parent id; version 00 must be exactly 55
// characters; a later version may append "-..." after the flags (future fields, ignored).
std::optional<TraceParent> parse_traceparent(std::string_view header);

// Random lowercase hex ids (never all zeros): 32 digits for a trace id, 16 for a span id.
std::string random_hex_id(size_t digits);

// A client's X-Request-Id is kept when it is 1-128 characters of [A-Za-z0-9._:/+=-]; anything
// else (empty, too long, spaces, control characters) is replaced by a generated id, so log lines
// stay one line and cannot be forged.
bool valid_request_id(std::string_view id);

}  // namespace glassbox::server
