#include "server/http/http_types.h"

#include <nlohmann/json.hpp>

namespace glassbox::server {

Responder::State::~State() {
  if (!sent.exchange(true)) sink(json_error(500, "internal error: the request was dropped without a response"));
}

bool ResponseStream::write(std::string bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_.load() || ended_ || aborted_) return false;
    queued_ += bytes;
  }
  notify();
  return true;
}

void ResponseStream::end() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || aborted_) return;
    ended_ = true;
  }
  notify();
}

void ResponseStream::abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || aborted_) return;
    aborted_ = true;
  }
  notify();
}

void ResponseStream::attach(std::function<void()> wake) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = std::move(wake);
  }
  notify();  // what was queued before the headers went out
}

ResponseStream::Pending ResponseStream::take() {
  std::lock_guard<std::mutex> lock(mu_);
  Pending p;
  p.bytes.swap(queued_);
  p.end = ended_;
  p.abort = aborted_;
  return p;
}

void ResponseStream::mark_gone() {
  gone_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  queued_.clear();
  wake_ = nullptr;
}

void ResponseStream::notify() {
  std::function<void()> w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    w = wake_;
  }
  if (w) w();
}

HttpResponse json_error(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

std::optional<std::string> percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return std::nullopt;  // '%' needs two hex digits after it
    const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') return std::nullopt;
    out += c;
    i += 2;
  }
  return out;
}

}  // namespace glassbox::server
