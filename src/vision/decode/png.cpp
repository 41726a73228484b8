// PNG through libspng. Colour conversion as PIL's open + convert("RGB"): grey replicated,
// palette expanded, alpha and tRNS dropped, 16-bit samples reduced to their high byte (PIL
// unpacks "RGB;16B"/"RGBA;16B"/"LA;16B" that way). 16-bit greyscale without alpha is refused:
// PIL opens it as mode "I" and convert("RGB") clips every value above 255 to white.
#include <spng.h>

#include <cstring>
#include <memory>

#include "vision/decode/formats.h"

namespace glassbox::vision::detail {
namespace {

struct SpngCtx {
  spng_ctx* ctx = spng_ctx_new(0);
  ~SpngCtx() {
    if (ctx) spng_ctx_free(ctx);
  }
};

Error spng_error(int code, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + spng_strerror(code), {},
                    "the PNG is damaged or truncated; re-encode it");
}

const char* colour_name(uint8_t type) {
  switch (type) {
    case SPNG_COLOR_TYPE_GRAYSCALE: return "grey";
    case SPNG_COLOR_TYPE_TRUECOLOR: return "rgb";
    case SPNG_COLOR_TYPE_INDEXED: return "palette";
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: return "grey+alpha";
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: return "rgba";
  }
  return "unknown";
}

}  // namespace

Result<DecodedImage> decode_png(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  SpngCtx s;
  if (!s.ctx) return make_error(ErrorCode::kInternal, "spng_ctx_new failed");
  // Metadata chunks (text, ICC, EXIF) are bounded too: 16 MiB each, 64 MiB in all.
  spng_set_chunk_limits(s.ctx, 16u << 20, 64u << 20);
  int rc = spng_set_png_buffer(s.ctx, data, size);
  if (rc) return spng_error(rc, "PNG not readable");
  spng_ihdr ihdr{};
  if ((rc = spng_get_ihdr(s.ctx, &ihdr))) return spng_error(rc, "PNG header unreadable");
  GB_RETURN_IF_ERROR(check_declared_size(ihdr.width, ihdr.height, limits, "PNG"));
  DecodedImage out;
  out.info.stored_width = static_cast<int>(ihdr.width);
  out.info.stored_height = static_cast<int>(ihdr.height);
  out.info.colour = colour_name(ihdr.color_type);
  out.info.bit_depth = ihdr.bit_depth;
  if (ihdr.bit_depth == 16 && ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE)
    return make_error(ErrorCode::kUnsupported,
                      "16-bit greyscale PNG is not decoded: Pillow (Python transformers) opens it as mode I and "
                      "convert('RGB') clips every value above 255 to white, sharp (transformers.js) scales it; the "
                      "references disagree and glassbox will not pick one silently",
                      {}, "convert it to 8 bits first (e.g. convert in.png -depth 8 out.png)");
  spng_trns trns{};
  const bool has_trns = spng_get_trns(s.ctx, &trns) == 0;
  out.info.alpha_dropped = has_trns || ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                           ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  const bool wide = ihdr.bit_depth == 16;
  const int fmt = wide ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
  size_t bytes = 0;
  if ((rc = spng_decoded_image_size(s.ctx, fmt, &bytes))) return spng_error(rc, "PNG size unknown");
  std::vector<uint8_t> rgba(bytes);
  // flags 0: no tRNS applied, no gamma (PIL applies neither).
  if ((rc = spng_decode_image(s.ctx, rgba.data(), rgba.size(), fmt, 0))) return spng_error(rc, "PNG data not decodable");
  const size_t pixels = static_cast<size_t>(ihdr.width) * ihdr.height;
  out.image.width = static_cast<int>(ihdr.width);
  out.image.height = static_cast<int>(ihdr.height);
  out.image.pixels.resize(pixels * 3);
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < 3; ++c) {
      if (wide) {
        uint16_t v;
        std::memcpy(&v, &rgba[(i * 4 + c) * 2], 2);  // host-endian
        out.image.pixels[i * 3 + c] = static_cast<uint8_t>(v >> 8);
      } else {
        out.image.pixels[i * 3 + c] = rgba[i * 4 + c];
      }
    }
  spng_exif exif{};
  if (spng_get_exif(s.ctx, &exif) == 0 && exif.data)
    out.info.exif_orientation = exif_orientation(reinterpret_cast<const uint8_t*>(exif.data), exif.length);
  return out;
}

}  // namespace glassbox::vision::detail
