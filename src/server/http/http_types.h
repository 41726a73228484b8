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
  // Set: the body is this stream (chunked), `body` is ignored; headers go out at once.
  std::shared_ptr<ResponseStream> stream;
};

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

// {"error": message} with the status; message must not contain internal paths.
HttpResponse json_error(int status, const std::string& message);

// Percent-decodes a path; nullopt on a malformed escape or a decoded NUL.
std::optional<std::string> percent_decode(std::string_view in);

}  // namespace glassbox::server
