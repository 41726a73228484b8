// WebP through libwebp (still images; an animation is refused by name). Alpha is dropped as
// PIL's convert("RGB") drops it; EXIF from the RIFF "EXIF" chunk.
#include <webp/decode.h>

#include <cstring>

#include "vision/decode/formats.h"

namespace glassbox::vision::detail {
namespace {

// Walks the RIFF chunks after "RIFF <size> WEBP" for "EXIF" (bounded by the buffer).
int webp_orientation(const uint8_t* d, size_t n) {
  size_t i = 12;
  while (n >= 8 && i <= n - 8) {
    const size_t len = d[i + 4] | d[i + 5] << 8 | d[i + 6] << 16 | static_cast<size_t>(d[i + 7]) << 24;
    if (len > n - i - 8) return 1;
    if (std::memcmp(d + i, "EXIF", 4) == 0) return exif_orientation(d + i + 8, len);
    i += 8 + len + (len & 1);
  }
  return 1;
}

}  // namespace

Result<DecodedImage> decode_webp(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  WebPBitstreamFeatures f{};
  const VP8StatusCode st = WebPGetFeatures(data, size, &f);
  if (st != VP8_STATUS_OK)
    return make_error(ErrorCode::kInvalidArgument, "WebP header unreadable (libwebp status " + std::to_string(st) + ")",
                      {}, "the WebP is damaged or truncated; re-encode it");
  if (f.has_animation)
    return make_error(ErrorCode::kUnsupported, "animated WebP is not decoded (which frame is the image is a guess)", {},
                      "extract the frame you mean as a still image");
  GB_RETURN_IF_ERROR(check_declared_size(f.width, f.height, limits, "WebP"));
  DecodedImage out;
  out.info.stored_width = f.width;
  out.info.stored_height = f.height;
  out.info.colour = f.has_alpha ? "rgba" : "rgb";
  out.info.alpha_dropped = f.has_alpha;
  out.image.width = f.width;
  out.image.height = f.height;
  out.image.pixels.resize(static_cast<size_t>(f.width) * f.height * 3);
  if (!WebPDecodeRGBInto(data, size, out.image.pixels.data(), out.image.pixels.size(), f.width * 3))
    return make_error(ErrorCode::kInvalidArgument, "WebP data not decodable (damaged or truncated)", {},
                      "re-encode the image");
  out.info.exif_orientation = webp_orientation(data, size);
  return out;
}

}  // namespace glassbox::vision::detail
