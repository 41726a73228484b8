#include "server/http/http_types.h"

#include <nlohmann/json.hpp>

namespace glassbox::server {

Responder::State::~State() {
  if (!sent.exchange(true)) sink(refuse(RefusalCode::kInternal, "internal error: the request was dropped without a response"));
}

const RefusalInfo& refusal_info(RefusalCode code) {
  // OpenAI: 4xx are invalid_request_error, 429 rate_limit_error, 5xx server_error (what its
  // clients map to BadRequestError, NotFoundError, RateLimitError, InternalServerError by status).
  // TEI's ErrorType: validation, tokenizer, empty, overloaded, backend, unhealthy.
  // gRPC status codes (grpc/status.h numbers): 3 INVALID_ARGUMENT, 5 NOT_FOUND, 12 UNIMPLEMENTED,
  // 8 RESOURCE_EXHAUSTED (a size over a limit), 14 UNAVAILABLE (retry later or elsewhere: a full
  // queue, like 429, an unready model, a drain), 4 DEADLINE_EXCEEDED, 1 CANCELLED, 13 INTERNAL.
  using C = RefusalCode;
  static constexpr RefusalInfo table[] = {
      {C::kInvalidRequest, "invalid_request", 400, "invalid_request_error", "validation", "invalid", 3},
      {C::kRouteNotFound, "route_not_found", 404, "invalid_request_error", "validation", "invalid", 12},
      {C::kModelNotFound, "model_not_found", 404, "invalid_request_error", "validation", "invalid", 5},
      {C::kMethodNotAllowed, "method_not_allowed", 405, "invalid_request_error", "validation", "invalid", 12},
      {C::kTooLarge, "too_large", 413, "invalid_request_error", "validation", "too_large", 8},
      {C::kHeadersTooLarge, "headers_too_large", 431, "invalid_request_error", "validation", "invalid", 8},
      {C::kQueueFull, "queue_full", 429, "rate_limit_error", "overloaded", "queue_full", 14},
      {C::kModelUnavailable, "model_unavailable", 503, "server_error", "unhealthy", "unavailable", 14},
      {C::kDraining, "draining", 503, "server_error", "unhealthy", "draining", 14},
      {C::kDeadline, "deadline_exceeded", 504, "server_error", "overloaded", "deadline", 4},
      {C::kCancelled, "cancelled", 499, "invalid_request_error", "validation", "cancelled", 1},
      {C::kInternal, "internal", 500, "server_error", "backend", nullptr, 13},
  };
  static_assert(sizeof table / sizeof table[0] == static_cast<size_t>(C::kInternal) + 1, "one row per RefusalCode");
  static_assert([] {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
      if (static_cast<size_t>(table[i].code) != i) return false;
    return true;
  }(), "rows in RefusalCode order");
  return table[static_cast<size_t>(code)];
}

HttpResponse refuse(Refusal r) {
  HttpResponse out;
  out.status = refusal_info(r.code).status;
  out.close = r.close;
  if (r.retry_after_s > 0) out.headers.emplace_back("Retry-After", std::to_string(r.retry_after_s));
  out.refusal = std::move(r);
  return out;
}

HttpResponse refuse(RefusalCode code, std::string message, std::string param) {
  return refuse(Refusal{code, std::move(message), std::move(param)});
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
