// Internal to src/vision/decode: one decoder per format, the shared limit check and EXIF.
#pragma once

#include <cstddef>
#include <cstdint>

#include "glassbox/vision.h"

namespace glassbox::vision::detail {

// Refuses a declared size over the limits (before any pixel buffer exists). `format` names the
// decoder in the message: "PNG header declares 30000 x 30000 = 900000000 pixels ...".
Status check_declared_size(int64_t width, int64_t height, const DecodeLimits& limits, const char* format);

// Each decoder fills image (RGB), info (colour, depth, stored size) and info.exif_orientation
// (from the file's EXIF, 1 when absent); orientation is applied by decode_image.
Result<DecodedImage> decode_jpeg(const uint8_t* data, size_t size, const DecodeLimits& limits);
Result<DecodedImage> decode_png(const uint8_t* data, size_t size, const DecodeLimits& limits);
Result<DecodedImage> decode_webp(const uint8_t* data, size_t size, const DecodeLimits& limits);

// The Orientation tag (0x0112) of IFD0 of a TIFF-structured EXIF block (an optional "Exif\0\0"
// prefix is skipped); 1 when absent, malformed or out of 1..8. Reads only inside [data, size).
int exif_orientation(const uint8_t* data, size_t size);

// PIL.ImageOps.exif_transpose's transposition for orientation 2..8 (1: unchanged).
RgbImage apply_orientation(const RgbImage& in, int orientation);

}  // namespace glassbox::vision::detail
