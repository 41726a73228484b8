// What the HTTP front end hands to routes and gets back: plain structs, no Beast types,
// so routes and codecs can be tested and fuzzed without sockets.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glassbox::server {

// What the server learns about a request on its way (for metrics and the access log):
// written by the route and the scheduler before the response, read when it is sent.
struct RequestMeta {
  std::string route;    // the route's template, e.g. "/v2/models/{m}/infer" (a bounded label set)
  std::string model;
  std::string version;
  std::string id;       // the OIP request id, when one was sent
  // Identity for logs and tracing (server/codec/trace_context.h): X-Request-Id or a generated
  // one; the W3C trace id (the client's traceparent's, or new), this server's span id, the
  // client's span id (empty when it sent no valid traceparent) and the trace flags.
  std::string request_id, trace_id, span_id, parent_span_id, trace_flags = "00";
  std::string method;
  int64_t bytes_in = 0;  // request body bytes
  double queue_s = -1;  // waiting before its first engine run
  double compute_s = 0; // engine runs it took part in (summed)
  int64_t tokens = 0;   // real tokens of its texts
  int64_t batch_size = 0;  // largest engine batch it ran in
  int64_t tokens_dropped = 0;
  // Set by the route from the request (OIP parameters.timeout/priority, X-Request-Timeout-Ms,
  // X-Request-Priority): when its work is dropped unrun (504), and whether it goes first.
  int64_t timeout_ms = -1;  // -1: the server's default_timeout_ms
  bool high_priority = false;
};

struct HttpRequest {
  std::string method;   // "GET", "POST", ...
  std::string path;     // decoded target without the query, e.g. "/v2/models/langid/infer"
  std::string query;    // after '?', undecoded
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case
  std::string body;
  // Set when the client closed its connection before the response: work not yet
  // started is dropped, nothing else is affected.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<RequestMeta> meta = std::make_shared<RequestMeta>();

  std::optional<std::string_view> header(std::string_view lower_name) const {
    for (const auto& [k, v] : headers)
      if (k == lower_name) return std::string_view(v);
    return std::nullopt;
  }
};

// Why a request is refused. One row per code in http_types.cpp (its HTTP status, OpenAI error
// type, TEI error_type, the glassbox_rejected_requests_total reason and the gRPC status code): routes name the code,
// the calling route's protocol renders the body (server/routes/refusal.h).
enum class RefusalCode {
  kInvalidRequest,    // 400: malformed JSON, a wrong field, a value out of range
  kRouteNotFound,     // 404: no route has this path
  kModelNotFound,     // 404: no such model or version
  kMethodNotAllowed,  // 405: the path is a route, the method is not
  kTooLarge,          // 413: body, tensor or text over a declared limit
  kHeadersTooLarge,   // 431: header bytes or count over a declared limit
  kQueueFull,         // 429 + Retry-After: the model's queue holds max_queue requests
  kModelUnavailable,  // 503: the model exists but does not serve (loading, failed, unloaded)
  kDraining,          // 503 + Connection: close: the server is shutting down
  kDeadline,          // 504: the request's deadline passed before compute
  kCancelled,         // 499 (logged only): the client left before compute
  kInternal,          // 500: an engine error
};

struct Refusal {
  Refusal() = default;
  Refusal(RefusalCode c, std::string m, std::string p = {}, int retry_after = 0, bool close_after = false)
      : code(c), message(std::move(m)), param(std::move(p)), retry_after_s(retry_after), close(close_after) {}
  RefusalCode code = RefusalCode::kInternal;
  std::string message;  // "where: what (fix: ...)"; never an internal path
  std::string param;    // the request field at fault ("input", "inputs", "model"), empty when none
  std::string detail;   // a more specific machine-readable code than the code's name (OpenAI error.code,
                        // e.g. context_length_exceeded, kv_budget); empty: the code's name
  int retry_after_s = 0;  // > 0: sent as Retry-After
  bool close = false;     // the connection is closed after the response
};

struct RefusalInfo {
  RefusalCode code;
  const char* name;         // machine-readable code: OpenAI error.code, the access log's "refusal"
  int status;
  const char* openai_type;  // OpenAI error.type
  const char* tei_type;     // TEI/TGI error_type (their ErrorType, snake_case)
  const char* metric_reason;  // glassbox_rejected_requests_total{reason}; nullptr: not counted
  int grpc_code;              // the gRPC status code (its number, as grpc::StatusCode) of the gRPC front end
};
const RefusalInfo& refusal_info(RefusalCode code);

// A response body sent in pieces as they are produced (chunked transfer encoding; e.g. SSE).
// The producer writes from any thread, in order, and ends it exactly once: end() sends the
// terminating chunk (a clean end), abort() closes the connection without it (the client sees an
// incomplete response, never a normal-looking end). client_gone() turns true when the client
// has left (a write failed, timed out, or the connection closed): the producer stops then.
// Knows bytes only, no protocol.
class ResponseStream {
 public:
  // Queues bytes for the client; false (and nothing queued) once the client has gone.
  bool write(std::string bytes);
  void end();
  void abort();
  bool client_gone() const { return gone_.load(); }

  // --- the HTTP layer's side ---
  struct Pending {
    std::string bytes;
    bool end = false;
    bool abort = false;
  };
  // wake() is called (from the producer's thread) whenever bytes or the end are queued.
  void attach(std::function<void()> wake);
  Pending take();
  void mark_gone();

 private:
  void notify();
  mutable std::mutex mu_;
  std::string queued_;
  bool ended_ = false, aborted_ = false;
  std::function<void()> wake_;
  std::atomic<bool> gone_{false};
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool close = false;  // send Connection: close and close after writing
  // Set on a refusal: the body is rendered in the calling route's protocol just before sending.
  std::optional<Refusal> refusal;
  // Set: the body is this stream (chunked), `body` is ignored; headers go out at once.
  std::shared_ptr<ResponseStream> stream;
};

// A refusal as a response: status, Retry-After and close set; body left to the route's protocol.
HttpResponse refuse(Refusal r);
HttpResponse refuse(RefusalCode code, std::string message, std::string param = {});

// Delivers a request's response exactly once, from any thread. A Responder dropped
// without being called answers 500, so no accepted request is left hanging.
class Responder {
 public:
  using Sink = std::function<void(HttpResponse)>;
  explicit Responder(Sink sink) : state_(std::make_shared<State>(std::move(sink))) {}
  void operator()(HttpResponse response) const { state_->send(std::move(response)); }
  bool sent() const { return state_->sent.load(); }

 private:
  struct State {
    explicit State(Sink s) : sink(std::move(s)) {}
    ~State();
    void send(HttpResponse r) {
      if (!sent.exchange(true)) sink(std::move(r));
    }
    Sink sink;
    std::atomic<bool> sent{false};
  };
  std::shared_ptr<State> state_;
};

using Handler = std::function<void(HttpRequest&&, Responder)>;

// Percent-decodes a path; nullopt on a malformed escape or a decoded NUL.
std::optional<std::string> percent_decode(std::string_view in);

}  // namespace glassbox::server
