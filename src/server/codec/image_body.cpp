#include "server/codec/image_body.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace glassbox::server {
namespace {

constexpr std::array<int8_t, 256> base64_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 26; ++i) {
    t[static_cast<size_t>('A' + i)] = static_cast<int8_t>(i);
    t[static_cast<size_t>('a' + i)] = static_cast<int8_t>(26 + i);
  }
  for (int i = 0; i < 10; ++i) t[static_cast<size_t>('0' + i)] = static_cast<int8_t>(52 + i);
  t['+'] = 62;
  t['/'] = 63;
  t['-'] = 62;  // URL-safe alphabet
  t['_'] = 63;
  return t;
}
constexpr auto kBase64 = base64_table();

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<std::string> decode_base64(std::string_view text, const std::string& where) {
  size_t n = text.size();
  while (n > 0 && text[n - 1] == '=' && text.size() - n < 2) --n;  // at most two '='
  if (n % 4 == 1)
    return make_error(ErrorCode::kInvalidArgument, "base64 text of " + std::to_string(text.size()) + " characters is cut off", where,
                      "send the whole image encoded with standard base64");
  std::string out;
  out.reserve(n / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    const int8_t v = kBase64[static_cast<unsigned char>(text[i])];
    if (v < 0)
      return make_error(ErrorCode::kInvalidArgument,
                        "not base64: character " + std::to_string(i) + " is " +
                            (std::isprint(static_cast<unsigned char>(text[i])) ? "'" + std::string(1, text[i]) + "'" : "a control byte"),
                        where, "send the image bytes base64-encoded (or a data URI), without line breaks");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

Result<std::string> image_bytes_from_text(std::string_view text, const std::string& where) {
  if (text.size() >= 5 && lower(text.substr(0, 5)) == "data:") {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos)
      return make_error(ErrorCode::kInvalidArgument, "data URI without ',' before its payload", where);
    const std::string header = lower(text.substr(5, comma - 5));
    const std::string media = header.substr(0, header.find(';'));
    if (media != "image/jpeg" && media != "image/png" && media != "image/webp" && media != "image/jpg")
      return make_error(ErrorCode::kInvalidArgument, "data URI of type '" + media + "': images are image/jpeg, image/png or image/webp",
                        where);
    if (header.size() < 7 || header.compare(header.size() - 7, 7, ";base64") != 0)
      return make_error(ErrorCode::kInvalidArgument, "data URI is not base64-encoded (no ';base64')", where);
    return decode_base64(text.substr(comma + 1), where);
  }
  return decode_base64(text, where);
}

std::optional<std::string> image_media_type(std::string_view content_type) {
  const std::string t = lower(trim(content_type.substr(0, content_type.find(';'))));
  if (t == "image/jpeg" || t == "image/png" || t == "image/webp") return t;
  return std::nullopt;
}

bool is_image_content_type(std::string_view content_type) {
  return lower(trim(content_type)).rfind("image/", 0) == 0;
}

}  // namespace glassbox::server
