// JPEG through libjpeg-turbo's TurboJPEG API (the decoder Pillow links too, with the same
// defaults: accurate integer DCT, fancy upsampling), so pixels equal PIL's.
#include <turbojpeg.h>

#include <cstring>
#include <memory>

#include "vision/decode/formats.h"

namespace glassbox::vision::detail {
namespace {

struct TjHandle {
  tjhandle h = tjInitDecompress();
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
};

// The EXIF block of the first APP1 "Exif" segment before the scan data (bounded walk).
int jpeg_orientation(const uint8_t* d, size_t n) {
  size_t i = 2;
  while (i + 4 <= n) {
    if (d[i] != 0xFF) return 1;
    const uint8_t m = d[i + 1];
    if (m == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (m == 0xDA || m == 0xD9) return 1;  // start of scan / end of image: no EXIF before it
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) {  // markers without a length
      i += 2;
      continue;
    }
    const size_t len = static_cast<size_t>(d[i + 2]) << 8 | d[i + 3];
    if (len < 2 || len > n - i - 2) return 1;
    if (m == 0xE1 && len >= 8 && std::memcmp(d + i + 4, "Exif\0\0", 6) == 0) return exif_orientation(d + i + 4, len - 2);
    i += 2 + len;
  }
  return 1;
}

Error tj_error(tjhandle h, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + tjGetErrorStr2(h), {},
                    "the JPEG is damaged or truncated; re-encode it");
}

}  // namespace

Result<DecodedImage> decode_jpeg(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  TjHandle tj;
  if (!tj.h) return make_error(ErrorCode::kInternal, std::string("tjInitDecompress failed: ") + tjGetErrorStr2(nullptr));
  int w = 0, h = 0, subsamp = 0, cs = 0;
  if (tjDecompressHeader3(tj.h, data, size, &w, &h, &subsamp, &cs) != 0) return tj_error(tj.h, "JPEG header unreadable");
  if (cs == TJCS_CMYK || cs == TJCS_YCCK)
    return make_error(ErrorCode::kUnsupported,
                      std::string("CMYK JPEG (") + (cs == TJCS_CMYK ? "CMYK" : "YCCK") +
                          " colour space) is not decoded: turning ink into RGB needs the file's ICC profile or "
                          "Adobe inversion convention, and Pillow's naive formula differs from sharp's",
                      {}, "convert it to an sRGB JPEG first (e.g. convert in.jpg -colorspace sRGB out.jpg)");
  GB_RETURN_IF_ERROR(check_declared_size(w, h, limits, "JPEG"));
  DecodedImage out;
  out.info.stored_width = w;
  out.info.stored_height = h;
  out.info.colour = cs == TJCS_GRAY ? "grey" : cs == TJCS_RGB ? "rgb" : "ycbcr";
  out.image.width = w;
  out.image.height = h;
  out.image.pixels.resize(static_cast<size_t>(w) * h * 3);
  // STOPONWARNING: a truncated or corrupt stream is an error (Pillow: "image file is truncated"),
  // never grey filler. LIMITSCANS: refuse progressive files with > 500 scans (a CPU bomb).
  if (tjDecompress2(tj.h, data, size, out.image.pixels.data(), w, 0, h, TJPF_RGB,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0)
    return tj_error(tj.h, "JPEG data not decodable");
  out.info.exif_orientation = jpeg_orientation(data, size);
  return out;
}

}  // namespace glassbox::vision::detail
