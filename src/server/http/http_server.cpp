#include "server/http/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

namespace glassbox::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

struct HttpServer::Impl {
  explicit Impl(const ServerOptions& o) : limits(o) {}
  const ServerOptions& limits;
  Handler handler;
  RefusalRenderer render;
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work{ioc.get_executor()};
  tcp::acceptor acceptor{ioc};
  net::signal_set signals{ioc};
  std::atomic<int64_t> in_flight{0};
  std::atomic<bool> closing{false};
  std::function<void(int)> signal_fn;

  void accept();
  void wait_signal();
};

namespace {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}
  void start() { read_header(); }

 private:
  const ServerOptions& limits() const { return server_.limits; }

  void read_header() {
    target_.clear();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits().max_header_bytes));
    parser_->body_limit(static_cast<uint64_t>(limits().max_body_bytes));
    stream_.expires_after(std::chrono::milliseconds(limits().header_timeout_ms));
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    target_ = std::string(parser_->get().target().substr(0, 512));  // set once the request line is parsed
    if (ec == http::error::header_limit)
      return reject(RefusalCode::kHeadersTooLarge, "request headers exceed the server's max_header_bytes (" +
                                                       std::to_string(limits().max_header_bytes) + ")");
    if (ec == http::error::body_limit) return reject(RefusalCode::kTooLarge, body_over_limit());
    if (ec) return close();  // end of stream, timeout (slow client), reset, malformed request line
    const auto& req = parser_->get();
    size_t fields = 0;
    for (auto it = req.begin(); it != req.end(); ++it) ++fields;
    if (fields > static_cast<size_t>(limits().max_header_count))
      return reject(RefusalCode::kHeadersTooLarge, "request has " + std::to_string(fields) + " header fields, over the server's max_header_count (" +
                             std::to_string(limits().max_header_count) + ")");
    if (auto len = parser_->content_length(); len && *len > static_cast<uint64_t>(limits().max_body_bytes))
      return reject(RefusalCode::kTooLarge, "request body of " + std::to_string(*len) + " bytes exceeds the server's max_body_bytes (" +
                             std::to_string(limits().max_body_bytes) + ")");
    stream_.expires_after(std::chrono::milliseconds(limits().body_timeout_ms));
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      net::async_write(stream_, net::buffer(*cont), [self = shared_from_this(), cont](beast::error_code e, size_t) {
        if (e) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit) return reject(RefusalCode::kTooLarge, body_over_limit());
    if (ec) return close();
    auto msg = parser_->release();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    const std::string_view target = msg.target();
    const size_t q = target.find('?');
    auto path = percent_decode(target.substr(0, q));
    if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
    keep_alive_ = msg.keep_alive();
    if (!path) return reject(RefusalCode::kInvalidRequest, "request path has a malformed percent escape or a NUL");
    req.path = std::move(*path);
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      req.headers.emplace_back(std::move(name), std::string(f.value()));
    }
    req.body = std::move(msg.body());
    cancelled_ = req.cancelled;
    server_.in_flight.fetch_add(1);
    stream_.expires_never();
    watch_disconnect();
    auto self = shared_from_this();
    Responder responder([self](HttpResponse r) {
      net::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable { self->write(std::move(r), true); });
    });
    server_.handler(std::move(req), std::move(responder));
  }

  // While the request is being computed, a readable socket with nothing to read means the
  // client has gone: mark the request cancelled so queued work is dropped.
  void watch_disconnect() {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec || self->responding_) return;
      char b;
      beast::error_code pe;
      const size_t n = self->stream_.socket().receive(net::buffer(&b, 1), tcp::socket::message_peek, pe);
      if (pe || n == 0) self->cancelled_->store(true);  // pipelined bytes (n > 0) are read later
    });
  }

  std::string body_over_limit() const {
    return "request body exceeds the server's max_body_bytes (" + std::to_string(limits().max_body_bytes) + ")";
  }

  void reject(RefusalCode code, std::string message) {
    // The rest of the request was not read: the connection cannot be reused.
    write(refuse(Refusal{code, std::move(message), {}, 0, true}), false);
  }

  void write(HttpResponse r, bool counted) {
    responding_ = true;
    if (r.refusal && r.body.empty() && server_.render) server_.render(target_, r);
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // ends watch_disconnect's wait
    if (r.stream) return write_stream(std::move(r), counted);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), 11);
    res->set(http::field::server, "glassbox");
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    const bool keep = keep_alive_ && !r.close && !server_.closing.load();
    res->keep_alive(keep);
    res->prepare_payload();
    stream_.expires_after(std::chrono::milliseconds(limits().body_timeout_ms));
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep, counted](beast::error_code ec, size_t) {
      if (counted) self->server_.in_flight.fetch_sub(1);
      self->responding_ = false;
      if (ec || !keep) return self->close();
      self->read_header();
    });
  }

  // A streamed body: the headers now (chunked), then each piece the producer queues, then the
  // terminating chunk. Every write has the body timeout, so a client that stops reading is cut
  // and reported gone like one that closed its connection.
  void write_stream(HttpResponse r, bool counted) {
    auto res = std::make_shared<http::response<http::empty_body>>(static_cast<http::status>(r.status), 11);
    res->set(http::field::server, "glassbox");
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    stream_keep_ = keep_alive_ && !r.close && !server_.closing.load();
    res->keep_alive(stream_keep_);
    res->chunked(true);
    body_ = std::move(r.stream);
    stream_counted_ = counted;
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    stream_.expires_after(std::chrono::milliseconds(limits().body_timeout_ms));
    http::async_write_header(stream_, *sr, [self = shared_from_this(), res, sr](beast::error_code ec, size_t) {
      if (ec) return self->stream_failed();
      self->stream_.expires_never();
      self->stream_started_ = true;
      self->watch_stream_reader();
      std::weak_ptr<Connection> weak = self;
      self->body_->attach([weak] {
        if (auto c = weak.lock()) net::post(c->stream_.get_executor(), [c] { c->flush_stream(); });
      });
    });
  }

  void flush_stream() {
    if (!body_ || !stream_started_ || stream_writing_) return;
    ResponseStream::Pending p = body_->take();
    if (p.bytes.empty() && !p.end && !p.abort) return;
    auto buf = std::make_shared<std::string>();
    if (!p.bytes.empty()) {
      char size[20];
      std::snprintf(size, sizeof size, "%zx\r\n", p.bytes.size());
      *buf = size + p.bytes + "\r\n";
    }
    if (p.end && !p.abort) *buf += "0\r\n\r\n";
    if (buf->empty()) return finish_stream(false);  // aborted with nothing left to send
    stream_writing_ = true;
    stream_.expires_after(std::chrono::milliseconds(limits().body_timeout_ms));
    net::async_write(stream_, net::buffer(*buf), [self = shared_from_this(), buf, p](beast::error_code ec, size_t) {
      self->stream_writing_ = false;
      self->stream_.expires_never();  // the next piece may take long to be produced
      if (ec) return self->stream_failed();
      if (p.abort) return self->finish_stream(false);
      if (p.end) return self->finish_stream(self->stream_keep_);
      self->flush_stream();
    });
  }

  // While streaming, a readable socket with nothing to read means the client has gone.
  void watch_stream_reader() {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->body_) return;
      char b;
      beast::error_code pe;
      const size_t n = self->stream_.socket().receive(net::buffer(&b, 1), tcp::socket::message_peek, pe);
      if (pe || n == 0) self->stream_failed();
    });
  }

  void stream_failed() {
    cancelled_->store(true);
    if (body_) body_->mark_gone();
    finish_stream(false);
  }

  void finish_stream(bool keep) {
    if (!body_) return;
    body_.reset();
    stream_started_ = false;
    responding_ = false;
    if (stream_counted_) server_.in_flight.fetch_sub(1);
    stream_counted_ = false;
    if (!keep) return close();
    beast::error_code ignored;
    stream_.socket().cancel(ignored);  // ends watch_stream_reader's wait (no write is pending)
    read_header();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  std::string target_;  // the request line's target, for rendering a refusal in its route's shape
  bool keep_alive_ = false;
  bool responding_ = false;
  std::shared_ptr<ResponseStream> body_;  // the streamed body being sent
  bool stream_started_ = false, stream_writing_ = false, stream_keep_ = false, stream_counted_ = false;
};

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!ec) std::make_shared<Connection>(std::move(socket), *this)->start();
    accept();
  });
}

HttpServer::HttpServer(const ServerOptions& options, Handler handler, RefusalRenderer render)
    : impl_(std::make_unique<Impl>(options)) {
  impl_->handler = std::move(handler);
  impl_->render = std::move(render);
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::listen(const std::string& host, int port) {
  beast::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) return make_error(ErrorCode::kInvalidArgument, "'" + host + "' is not an IP address", "--host", "e.g. 127.0.0.1");
  const tcp::endpoint ep(address, static_cast<unsigned short>(port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error(ErrorCode::kIo, "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message(),
                      "--host/--port", "pick a free port (0 picks one)");
  impl_->accept();
  return static_cast<int>(a.local_endpoint().port());
}

void HttpServer::run(int io_threads) {
  std::vector<std::thread> threads;
  for (int i = 1; i < io_threads; ++i) threads.emplace_back([this] { impl_->ioc.run(); });
  impl_->ioc.run();
  for (auto& t : threads) t.join();
}

void HttpServer::close_after_responses() { impl_->closing = true; }

int64_t HttpServer::in_flight() const { return impl_->in_flight.load(); }

void HttpServer::after(int ms, std::function<void()> fn) {
  auto timer = std::make_shared<net::steady_timer>(impl_->ioc, std::chrono::milliseconds(ms));
  timer->async_wait([timer, fn = std::move(fn)](beast::error_code ec) {
    if (!ec) fn();
  });
}

void HttpServer::stop() {
  impl_->work.reset();
  impl_->ioc.stop();
}

void HttpServer::on_signal(std::function<void(int)> fn) {
  impl_->signal_fn = std::move(fn);
  impl_->signals.add(SIGTERM);
  impl_->signals.add(SIGINT);
  impl_->wait_signal();
}

void HttpServer::Impl::wait_signal() {
  signals.async_wait([this](beast::error_code ec, int sig) {
    if (ec) return;
    signal_fn(sig);
    wait_signal();
  });
}

}  // namespace glassbox::server
