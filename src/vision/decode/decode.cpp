// Format sniffing, the limits checked before allocation, and the dispatch to one decoder.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "vision/decode/formats.h"

namespace glassbox::vision {

const char* image_format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

ImageFormat sniff_image_format(const uint8_t* d, size_t n) {
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return ImageFormat::kJpeg;
  if (n >= 8 && std::memcmp(d, kPng, 8) == 0) return ImageFormat::kPng;
  if (n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0) return ImageFormat::kWebp;
  return ImageFormat::kUnknown;
}

namespace detail {

Status check_declared_size(int64_t w, int64_t h, const DecodeLimits& limits, const char* format) {
  const std::string declared = std::string(format) + " header declares " + std::to_string(w) + " x " +
                               std::to_string(h);
  if (w <= 0 || h <= 0)
    return make_error(ErrorCode::kInvalidArgument, declared + ": an image needs at least one pixel", {},
                      "the file is damaged or not an image");
  if (static_cast<uint64_t>(w) > limits.max_side || static_cast<uint64_t>(h) > limits.max_side)
    return make_error(ErrorCode::kLimitExceeded,
                      declared + ", over the limit max_side = " + std::to_string(limits.max_side) +
                          " pixels per side (refused before decoding)",
                      {}, "resize the image first, or raise DecodeLimits::max_side");
  const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
  if (pixels > limits.max_pixels)
    return make_error(ErrorCode::kLimitExceeded,
                      declared + " = " + std::to_string(pixels) + " pixels, over the limit max_pixels = " +
                          std::to_string(limits.max_pixels) + " (Pillow's MAX_IMAGE_PIXELS; refused before decoding)",
                      {}, "resize the image first, or raise DecodeLimits::max_pixels");
  return Status();
}

}  // namespace detail

namespace {

std::string first_bytes(const uint8_t* d, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n && i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", d[i]);
    s += (i ? " " : "") + std::string(buf);
  }
  return s;
}

}  // namespace

Result<DecodedImage> decode_image(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  if (size == 0)
    return make_error(ErrorCode::kInvalidArgument, "empty image (0 bytes)", {}, "pass the bytes of a JPEG, PNG or WebP file");
  if (size > limits.max_encoded_bytes)
    return make_error(ErrorCode::kLimitExceeded,
                      "encoded image is " + std::to_string(size) + " bytes, over the limit max_encoded_bytes = " +
                          std::to_string(limits.max_encoded_bytes),
                      {}, "send a smaller file, or raise DecodeLimits::max_encoded_bytes");
  const ImageFormat format = sniff_image_format(data, size);
  Result<DecodedImage> r = make_error(ErrorCode::kInternal, "no decoder");
  switch (format) {
    case ImageFormat::kJpeg: r = detail::decode_jpeg(data, size, limits); break;
    case ImageFormat::kPng: r = detail::decode_png(data, size, limits); break;
    case ImageFormat::kWebp: r = detail::decode_webp(data, size, limits); break;
    case ImageFormat::kUnknown:
      return make_error(ErrorCode::kInvalidArgument,
                        "not a JPEG, PNG or WebP image (first bytes: " + first_bytes(data, size) + ")", {},
                        "glassbox reads JPEG, PNG and WebP, recognised by their magic bytes");
  }
  if (!r.ok()) return r;
  r->info.format = format;
  if (limits.apply_exif_orientation && r->info.exif_orientation != 1) {
    r->image = detail::apply_orientation(r->image, r->info.exif_orientation);
    r->info.orientation_applied = true;
  }
  return r;
}

Result<DecodedImage> decode_image_file(const std::string& path, const DecodeLimits& limits) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(ErrorCode::kNotFound, "image file does not exist", path);
  if (!S_ISREG(st.st_mode)) return make_error(ErrorCode::kInvalidArgument, "not a regular file", path);
  if (static_cast<uint64_t>(st.st_size) > limits.max_encoded_bytes)
    return make_error(ErrorCode::kLimitExceeded,
                      "file is " + std::to_string(st.st_size) + " bytes, over the limit max_encoded_bytes = " +
                          std::to_string(limits.max_encoded_bytes) + " (not read)",
                      path, "send a smaller file, or raise DecodeLimits::max_encoded_bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, "cannot open image file", path);
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  if (!bytes.empty() && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    return make_error(ErrorCode::kIo, "cannot read image file", path);
  auto r = decode_image(bytes.data(), bytes.size(), limits);
  if (!r.ok()) return std::move(r).take_error().with_where(path);
  return r;
}

bool looks_like_image_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[12] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return sniff_image_format(head, static_cast<size_t>(in.gcount())) != ImageFormat::kUnknown;
}

}  // namespace glassbox::vision
