// EXIF Orientation: a bounded reader of the one tag glassbox uses (no EXIF library: fewer lines
// that see untrusted bytes, and fuzzed with the decoders), and the eight transpositions.
#include <cstring>

#include "vision/decode/formats.h"

namespace glassbox::vision::detail {

int exif_orientation(const uint8_t* p, size_t n) {
  if (n >= 6 && std::memcmp(p, "Exif\0\0", 6) == 0) {
    p += 6;
    n -= 6;
  }
  if (n < 8) return 1;
  const bool le = p[0] == 'I' && p[1] == 'I';
  const bool be = p[0] == 'M' && p[1] == 'M';
  if (!le && !be) return 1;
  auto u16 = [&](size_t at) -> uint32_t { return le ? (p[at] | p[at + 1] << 8) : (p[at] << 8 | p[at + 1]); };
  auto u32 = [&](size_t at) -> uint32_t {
    return le ? (u16(at) | u16(at + 2) << 16) : (u16(at) << 16 | u16(at + 2));
  };
  if (u16(2) != 42) return 1;
  const size_t ifd = u32(4);
  if (ifd > n - 2) return 1;
  const size_t count = u16(ifd);
  for (size_t i = 0; i < count; ++i) {
    const size_t e = ifd + 2 + 12 * i;
    if (e > n - 12) break;  // n >= ifd + 2 here, so no wrap
    if (u16(e) != 0x0112) continue;
    if (u16(e + 2) != 3 || u32(e + 4) != 1) return 1;  // SHORT, one value (inline)
    const uint32_t v = u16(e + 8);
    return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
  }
  return 1;
}

RgbImage apply_orientation(const RgbImage& in, int o) {
  if (o < 2 || o > 8) return in;
  const bool swap = o >= 5;  // transpose, rotations by 90/270, transverse
  RgbImage out;
  out.width = swap ? in.height : in.width;
  out.height = swap ? in.width : in.height;
  out.pixels.resize(in.pixels.size());
  const int W = in.width, H = in.height;
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx = x, sy = y;
      switch (o) {
        case 2: sx = W - 1 - x; break;                   // FLIP_LEFT_RIGHT
        case 3: sx = W - 1 - x, sy = H - 1 - y; break;   // ROTATE_180
        case 4: sy = H - 1 - y; break;                   // FLIP_TOP_BOTTOM
        case 5: sx = y, sy = x; break;                   // TRANSPOSE
        case 6: sx = y, sy = H - 1 - x; break;           // ROTATE_270 (90 clockwise)
        case 7: sx = W - 1 - y, sy = H - 1 - x; break;   // TRANSVERSE
        case 8: sx = W - 1 - y, sy = x; break;           // ROTATE_90 (90 counter-clockwise)
      }
      const size_t d = (static_cast<size_t>(y) * out.width + x) * 3;
      const size_t s = (static_cast<size_t>(sy) * W + sx) * 3;
      std::memcpy(&out.pixels[d], &in.pixels[s], 3);
    }
  }
  return out;
}

}  // namespace glassbox::vision::detail
