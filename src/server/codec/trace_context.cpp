#include "server/codec/trace_context.h"

#include <random>

namespace glassbox::server {
namespace {

bool lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool all_zero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view h) {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55
  if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  TraceParent t{std::string(h.substr(0, 2)), std::string(h.substr(3, 32)), std::string(h.substr(36, 16)),
                std::string(h.substr(53, 2))};
  if (!lower_hex(t.version) || !lower_hex(t.trace_id) || !lower_hex(t.parent_id) || !lower_hex(t.flags)) return std::nullopt;
  if (t.version == "ff" || all_zero(t.trace_id) || all_zero(t.parent_id)) return std::nullopt;
  if (t.version == "00" && h.size() != 55) return std::nullopt;
  if (h.size() > 55 && h[55] != '-') return std::nullopt;
  return t;
}

std::string random_hex_id(size_t digits) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string out;
  do {
    out.clear();
    for (size_t i = 0; i < digits; ++i) out += hex[rng() & 15];
  } while (all_zero(out));
  return out;
}

bool valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("._:/+=-").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace glassbox::server
