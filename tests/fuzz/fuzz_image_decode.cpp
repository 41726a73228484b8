// The image decoders' glue (src/vision/decode): format sniffing, the limit checks on declared
// sizes, TurboJPEG / libspng / libwebp calls, the EXIF Orientation parser and the transpositions,
// then Pillow's resize on whatever decoded. Limits are lowered so each input stays cheap.
// Seeds: any small JPEG/PNG/WebP files (tests/vision/make_images.py renders some).
#include <cstddef>
#include <cstdint>

#include "glassbox/vision.h"
#include "vision/decode/formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace glassbox::vision;
  DecodeLimits limits;
  limits.max_pixels = 1u << 20;
  limits.max_side = 4096;
  limits.max_encoded_bytes = 1u << 20;
  auto r = decode_image(data, size, limits);
  if (r.ok()) {
    const RgbImage& im = r->image;
    const auto filter = static_cast<Resample>(data[size - 1] % 6);
    const RgbImage out = resize_pil(im, 1 + im.width % 37, 1 + im.height % 29, filter);
    if (out.pixels.size() != static_cast<size_t>(out.width) * out.height * 3) __builtin_trap();
  }
  (void)detail::exif_orientation(data, size);
  return 0;
}
