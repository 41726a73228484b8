// The HTTP/1.1 front end: an asynchronous listener on Boost.Beast/Asio. Hundreds of idle or
// slow connections cost a socket and a buffer each, never a thread. Limits are enforced
// before buffering: header bytes and count (431), Content-Length over the body cap (413,
// the body is never read), header and body read timeouts (the connection is closed).
// Knows routes only as one Handler; knows nothing of models.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <string_view>

#include "glassbox/error.h"
#include "server/http/http_types.h"
#include "server/server_options.h"

namespace glassbox::server {

// Renders a refusal the front end makes itself (413, 431, a bad path) for the request target it
// belongs to: the routes know which protocol's shape that is, the front end does not.
using RefusalRenderer = std::function<void(std::string_view target, HttpResponse& response)>;

class HttpServer {
 public:
  // Limits are read from `options` (max_body_bytes, max_header_bytes, max_header_count,
  // header_timeout_ms, body_timeout_ms), which must outlive the server.
  HttpServer(const ServerOptions& options, Handler handler, RefusalRenderer render);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the bound port (port 0 picks a free one).
  Result<int> listen(const std::string& host, int port);
  // Runs the IO threads until stop(); returns when they have finished.
  void run(int io_threads);
  // From now on every response carries Connection: close (draining: clients reconnect elsewhere).
  void close_after_responses();
  // Requests whose handler was called and whose response is not yet written.
  int64_t in_flight() const;
  // Runs fn after `ms` milliseconds on an IO thread.
  void after(int ms, std::function<void()> fn);
  // Ends run(): open connections are closed.
  void stop();
  // Calls fn(signal) on SIGTERM / SIGINT, on an IO thread.
  void on_signal(std::function<void(int)> fn);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace glassbox::server
