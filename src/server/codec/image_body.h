// Encoded images as requests carry them, before any decoding (core only, so it can be fuzzed
// alone): a JSON string holding base64 or a data URI ("data:image/png;base64,..."), a raw body
// whose Content-Type is image/jpeg, image/png or image/webp (what Hugging Face inference endpoints
// accept), or the bytes of an OIP BYTES element sent in the binary tensor extension. The pixels are
// decoded later under the model's DecodeLimits (checked from the header, before allocation).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "glassbox/error.h"

namespace glassbox::server {

// Standard base64 (RFC 4648 section 4; '=' padding optional, no line breaks or other characters)
// or its URL-safe alphabet (section 5). Anything else is an error naming the first bad position.
Result<std::string> decode_base64(std::string_view text, const std::string& where);

// A JSON image field: "data:<type>[;params];base64,<payload>" or plain base64. A data URI must be
// base64-encoded and of an image/jpeg|png|webp type; the bytes' magic decides the format later.
Result<std::string> image_bytes_from_text(std::string_view text, const std::string& where);

// The image media type of a Content-Type header ("image/png; q=1" -> "image/png"), when it is one
// glassbox decodes; nullopt for any other type (JSON bodies included).
std::optional<std::string> image_media_type(std::string_view content_type);
// True when the Content-Type names some image/* type (an unsupported one is refused by name).
bool is_image_content_type(std::string_view content_type);

}  // namespace glassbox::server
