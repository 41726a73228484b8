#include "server/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>

namespace glassbox::server {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kText};
std::mutex g_mu;

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  const size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof stamp - n, ".%03dZ", static_cast<int>(ms));
  return stamp;
}

void write_line(FILE* out, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

double ms(double seconds) { return static_cast<double>(static_cast<int64_t>(seconds * 1e6)) / 1e3; }

void event(const std::string& message, const RequestMeta* meta) {
  const std::string time = utc_now();
  if (g_format.load() == LogFormat::kText) {
    std::string line = time + " glassbox serve: " + message;
    if (meta) line += " [request_id=" + meta->request_id + " trace_id=" + meta->trace_id + "]";
    return write_line(stderr, line + "\n");
  }
  nlohmann::ordered_json j{{"time", time}, {"type", "event"}, {"level", "info"}, {"message", message}};
  if (meta) {
    j["request_id"] = meta->request_id;
    j["trace_id"] = meta->trace_id;
    j["span_id"] = meta->span_id;
    j["model"] = meta->model;
    j["route"] = meta->route;
  }
  write_line(stderr, dump(j));
}

}  // namespace

Result<LogFormat> parse_log_format(const std::string& name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return make_error(ErrorCode::kInvalidArgument, "log_format must be \"text\" or \"json\", not \"" + name + "\"", "log_format");
}

void set_log_format(LogFormat format) { g_format.store(format); }

void log_line(const std::string& message) { event(message, nullptr); }

void log_request_event(const std::string& message, const RequestMeta& meta) { event(message, &meta); }

void log_access(const RequestMeta& meta, const HttpResponse& response, double seconds) {
  nlohmann::ordered_json j;
  j["time"] = utc_now();
  j["type"] = "access";
  j["request_id"] = meta.request_id;
  j["trace_id"] = meta.trace_id;
  j["span_id"] = meta.span_id;
  if (!meta.parent_span_id.empty()) j["parent_span_id"] = meta.parent_span_id;
  if (!meta.id.empty()) j["inference_id"] = meta.id;  // the OIP request's own "id"
  j["method"] = meta.method;
  j["route"] = meta.route;
  j["model"] = meta.model;
  j["version"] = meta.version;
  j["status"] = response.status;
  if (response.refusal) j["refusal"] = refusal_info(response.refusal->code).name;
  j["total_ms"] = ms(seconds);
  j["queue_ms"] = meta.queue_s < 0 ? 0.0 : ms(meta.queue_s);
  j["compute_ms"] = ms(meta.compute_s);
  j["bytes_in"] = meta.bytes_in;
  j["bytes_out"] = static_cast<int64_t>(response.body.size());
  j["tokens"] = meta.tokens;
  j["tokens_dropped"] = meta.tokens_dropped;
  j["batch_size"] = meta.batch_size;
  if (g_format.load() == LogFormat::kJson) return write_line(stdout, dump(j));
  std::string line = j["time"].get<std::string>() + " glassbox access:";
  for (const auto& [k, v] : j.items())
    if (k != "time" && k != "type") line += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  write_line(stdout, line + "\n");
}

}  // namespace glassbox::server
