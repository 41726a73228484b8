// The server's metric families (names are a contract: dashboards and alert rules use them)
// and the per-request accounting done when a response is sent.
#pragma once

#include <string>

#include "server/codec/request_fields.h"
#include "server/http/http_types.h"
#include "server/metrics/metrics.h"

namespace glassbox::server {

struct ServerContext;

void declare_server_metrics(Metrics& metrics);
void declare_generation_metrics(Metrics& metrics);
// Counts the request by route and status, its duration, and a refusal by its code's reason;
// writes the access log line when enabled.
void record_request(ServerContext& ctx, const RequestMeta& meta, const HttpResponse& response, double seconds);

}  // namespace glassbox::server
