// Destructive inputs and declared behaviour of src/vision: every image here is made in memory by
// the encoders of the same libraries (TurboJPEG, libspng) or by hand (headers), so nothing binary
// is committed. Pixel exactness against the peers is in pillow_parity_test.py and
// transformers_js_test.js; this suite checks the refusals, the limits and the edge cases.
#include <gtest/gtest.h>
#include <spng.h>
#include <turbojpeg.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "glassbox/vision.h"

namespace {

using namespace glassbox;
using namespace glassbox::vision;
using Bytes = std::vector<uint8_t>;

Bytes pattern(int w, int h, int channels) {
  Bytes p(static_cast<size_t>(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c) p[(static_cast<size_t>(y) * w + x) * channels + c] = static_cast<uint8_t>(x * 7 + y * 13 + c * 50);
  return p;
}

Bytes encode_jpeg(int w, int h, int pixel_format = TJPF_RGB, int subsamp = TJSAMP_444, int quality = 95) {
  tjhandle t = tjInitCompress();
  const Bytes src = pattern(w, h, tjPixelSize[pixel_format]);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(t, src.data(), w, 0, h, pixel_format, &buf, &size, subsamp, quality, 0), 0) << tjGetErrorStr2(t);
  Bytes out(buf, buf + size);
  tjFree(buf);
  tjDestroy(t);
  return out;
}

Bytes encode_png(int w, int h, uint8_t color_type, uint8_t bit_depth, const Bytes& raw, const Bytes& exif = {}) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(w);
  ihdr.height = static_cast<uint32_t>(h);
  ihdr.color_type = color_type;
  ihdr.bit_depth = bit_depth;
  spng_set_ihdr(ctx, &ihdr);
  std::string exif_copy(exif.begin(), exif.end());
  if (!exif.empty()) {
    spng_exif e{exif_copy.size(), exif_copy.data()};
    EXPECT_EQ(spng_set_exif(ctx, &e), 0);
  }
  EXPECT_EQ(spng_encode_image(ctx, raw.data(), raw.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE), 0);
  size_t len = 0;
  int err = 0;
  auto* buf = static_cast<uint8_t*>(spng_get_png_buffer(ctx, &len, &err));
  Bytes out(buf, buf + len);
  std::free(buf);
  spng_ctx_free(ctx);
  return out;
}

// A little-endian TIFF block "Exif\0\0" + IFD0 holding Orientation (SHORT) only.
Bytes exif_block(uint16_t orientation, bool with_prefix) {
  Bytes b;
  if (with_prefix) b = {'E', 'x', 'i', 'f', 0, 0};
  const uint8_t tiff[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0,
                          static_cast<uint8_t>(orientation), 0, 0, 0, 0, 0, 0, 0};
  b.insert(b.end(), tiff, tiff + sizeof tiff);
  return b;
}

Bytes with_app1(const Bytes& jpeg, const Bytes& exif) {
  Bytes out(jpeg.begin(), jpeg.begin() + 2);  // SOI
  const size_t len = exif.size() + 2;
  out.push_back(0xFF), out.push_back(0xE1), out.push_back(static_cast<uint8_t>(len >> 8)), out.push_back(len & 0xFF);
  out.insert(out.end(), exif.begin(), exif.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

// A PNG whose IHDR declares w x h (valid CRC) followed by a tiny IDAT and IEND.
Bytes png_header_only(uint32_t w, uint32_t h) {
  Bytes b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes ihdr = {'I', 'H', 'D', 'R'};
  put32(ihdr, w);
  put32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  put32(b, 13);
  b.insert(b.end(), ihdr.begin(), ihdr.end());
  put32(b, crc32(ihdr.data(), ihdr.size()));
  const Bytes idat = {'I', 'D', 'A', 'T', 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01};
  put32(b, 8);
  b.insert(b.end(), idat.begin(), idat.end());
  put32(b, crc32(idat.data(), idat.size()));
  const Bytes iend = {'I', 'E', 'N', 'D'};
  put32(b, 0);
  b.insert(b.end(), iend.begin(), iend.end());
  put32(b, crc32(iend.data(), iend.size()));
  return b;
}

Result<DecodedImage> decode(const Bytes& b, const DecodeLimits& l = {}) { return decode_image(b.data(), b.size(), l); }

// A truncated file is an error, or (cut only in the last `tail` bytes, after the pixel data) the
// same image: never garbage, never a crash.
void expect_every_prefix_safe(const Bytes& full, size_t tail) {
  auto whole = decode(full);
  ASSERT_TRUE(whole.ok()) << whole.error().to_string();
  int ok = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    auto r = decode_image(full.data(), n);
    if (!r.ok()) continue;
    ++ok;
    EXPECT_EQ(r->image.pixels, whole->image.pixels) << "prefix " << n << " of " << full.size() << " decoded differently";
    EXPECT_GE(n, full.size() - tail) << "a prefix missing pixel data decoded";
  }
  EXPECT_LE(ok, static_cast<int>(tail));
}

TEST(VisionDecode, TruncatedJpegIsAnErrorAtEveryLength) { expect_every_prefix_safe(encode_jpeg(40, 24, TJPF_RGB, TJSAMP_420), 0); }

TEST(VisionDecode, TruncatedPngIsAnErrorAtEveryLength) {
  // libspng stops after the image data: a file cut in the IDAT CRC or IEND (last 16 bytes) decodes,
  // to the same pixels (Pillow also loads a PNG without IEND).
  expect_every_prefix_safe(encode_png(40, 24, SPNG_COLOR_TYPE_TRUECOLOR, 8, pattern(40, 24, 3)), 16);
}

TEST(VisionDecode, ZeroBytesAndTextAreClearErrors) {
  const uint8_t none = 0;
  auto r = decode_image(&none, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().what.find("empty image"), std::string::npos);
  const std::string text = "{\"inputs\": \"this is text, not an image\"}";
  auto t = decode_image(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(t.error().what.find("not a JPEG, PNG or WebP"), std::string::npos) << t.error().what;
}

TEST(VisionDecode, HugePngHeaderIsRefusedBeforeDecoding) {
  auto r = decode(png_header_only(30000, 30000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(r.error().what.find("30000 x 30000 = 900000000 pixels"), std::string::npos) << r.error().what;
  EXPECT_NE(r.error().what.find("max_pixels = 89478485"), std::string::npos) << r.error().what;
}

TEST(VisionDecode, HugeJpegHeaderIsRefusedBeforeDecoding) {
  Bytes j = encode_jpeg(16, 16);
  bool patched = false;
  for (size_t i = 2; i + 9 < j.size(); ++i)
    if (j[i] == 0xFF && j[i + 1] == 0xC0) {  // SOF0: length(2) precision(1) height(2) width(2)
      j[i + 5] = 30000 >> 8, j[i + 6] = 30000 & 0xFF, j[i + 7] = 30000 >> 8, j[i + 8] = 30000 & 0xFF;
      patched = true;
      break;
    }
  ASSERT_TRUE(patched);
  auto r = decode(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(r.error().what.find("JPEG header declares 30000 x 30000"), std::string::npos) << r.error().what;
}

TEST(VisionDecode, OneByHundredThousandIsRefusedByMaxSideAndItsResizeByMaxPixels) {
  const Bytes strip = encode_png(1, 100000, SPNG_COLOR_TYPE_GRAYSCALE, 8, Bytes(100000, 77));
  auto r = decode(strip);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(r.error().what.find("1 x 100000, over the limit max_side = 32768"), std::string::npos) << r.error().what;
  DecodeLimits wide;
  wide.max_side = 100000;
  auto ok = decode(strip, wide);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  Preprocess p;
  p.size.kind = SizeSpec::Kind::kShortestEdge;
  p.size.edge = 224;  // 224 x 22,400,000: refused, not allocated
  auto t = preprocess(ok->image, p, Layout::kNchw, wide);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(t.error().what.find("224 x 22400000"), std::string::npos) << t.error().what;
}

TEST(VisionDecode, EncodedSizeLimit) {
  const Bytes j = encode_jpeg(32, 32);
  DecodeLimits l;
  l.max_encoded_bytes = j.size() - 1;
  auto r = decode(j, l);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(r.error().what.find("max_encoded_bytes"), std::string::npos);
}

TEST(VisionDecode, CmykJpegIsRefusedByName) {
  auto r = decode(encode_jpeg(16, 8, TJPF_CMYK));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(r.error().what.find("CMYK JPEG"), std::string::npos) << r.error().what;
}

TEST(VisionDecode, SixteenBitPngWithAlphaKeepsTheHighByteAndDropsAlpha) {
  const int w = 5, h = 3;
  Bytes raw(static_cast<size_t>(w) * h * 8);
  std::vector<uint16_t> samples(raw.size() / 2);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<uint16_t>(i * 4099 + 255);
  std::memcpy(raw.data(), samples.data(), raw.size());  // libspng's encoder takes host-endian samples
  auto r = decode(encode_png(w, h, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 16, raw));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->info.alpha_dropped);
  EXPECT_EQ(r->info.bit_depth, 16);
  for (int p = 0; p < w * h; ++p)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(r->image.pixels[p * 3 + c], samples[p * 4 + c] >> 8) << "pixel " << p;
}

TEST(VisionDecode, SixteenBitGreyPngIsRefusedByName) {
  auto r = decode(encode_png(4, 4, SPNG_COLOR_TYPE_GRAYSCALE, 16, Bytes(32, 200)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(r.error().what.find("16-bit greyscale PNG"), std::string::npos);
}

// Orientation 6 (rotate 90 clockwise): the stored 3 x 2 image becomes 2 x 3 and the stored
// bottom-left pixel is the new top-left (PIL's ROTATE_270).
TEST(VisionDecode, ExifRotated90IsApplied) {
  const Bytes raw = pattern(3, 2, 3);
  {  // PNG eXIf holds the TIFF block without the "Exif" prefix (libspng refuses one)
    auto r = decode(encode_png(3, 2, SPNG_COLOR_TYPE_TRUECOLOR, 8, raw, exif_block(6, false)));
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->info.exif_orientation, 6);
    EXPECT_TRUE(r->info.orientation_applied);
    ASSERT_EQ(r->image.width, 2);
    ASSERT_EQ(r->image.height, 3);
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 2; ++x)
        for (int c = 0; c < 3; ++c)
          EXPECT_EQ(r->image.at(x, y, c), raw[((1 - x) * 3 + y) * 3 + c]) << x << "," << y;
  }
  DecodeLimits off;
  off.apply_exif_orientation = false;
  auto r = decode(encode_png(3, 2, SPNG_COLOR_TYPE_TRUECOLOR, 8, raw, exif_block(6, false)), off);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->image.width, 3);
  EXPECT_FALSE(r->info.orientation_applied);
}

TEST(VisionDecode, JpegApp1OrientationAllEight) {
  const Bytes j = encode_jpeg(6, 4);
  DecodeLimits off;
  off.apply_exif_orientation = false;
  auto plain = decode(j, off);
  ASSERT_TRUE(plain.ok());
  for (int o = 1; o <= 8; ++o) {
    auto r = decode(with_app1(j, exif_block(static_cast<uint16_t>(o), true)));
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->info.exif_orientation, o);
    EXPECT_EQ(r->image.width, o >= 5 ? 4 : 6) << o;
    // the four corners move as PIL's exif_transpose moves them
    const RgbImage& s = plain->image;
    const RgbImage& d = r->image;
    auto px = [](const RgbImage& im, int x, int y) { return im.at(x, y, 0) << 16 | im.at(x, y, 1) << 8 | im.at(x, y, 2); };
    const int tl[9][2] = {{0, 0}, {0, 0}, {5, 0}, {5, 3}, {0, 3}, {0, 0}, {0, 3}, {5, 3}, {5, 0}};
    EXPECT_EQ(px(d, 0, 0), px(s, tl[o][0], tl[o][1])) << "orientation " << o;
  }
}

TEST(VisionDecode, MalformedExifIsIgnoredNotTrusted) {
  const Bytes j = encode_jpeg(6, 4);
  Bytes bad = exif_block(6, true);
  bad[6 + 4] = 0xF0;  // IFD offset far past the block
  auto r = decode(with_app1(j, bad));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->info.exif_orientation, 1);
  Bytes nine = exif_block(9, true);  // out of 1..8
  auto r9 = decode(with_app1(j, nine));
  ASSERT_TRUE(r9.ok());
  EXPECT_EQ(r9->info.exif_orientation, 1);
}

TEST(VisionDecode, SniffAndLooksLikeImageNeverUseTheName) {
  const auto dir = std::filesystem::temp_directory_path() / ("gb_vision_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Bytes png = encode_png(2, 2, SPNG_COLOR_TYPE_TRUECOLOR, 8, pattern(2, 2, 3));
  std::ofstream(dir / "image.txt", std::ios::binary).write(reinterpret_cast<const char*>(png.data()), png.size());
  std::ofstream(dir / "text.png") << "hello";
  EXPECT_TRUE(looks_like_image_file((dir / "image.txt").string()));
  EXPECT_FALSE(looks_like_image_file((dir / "text.png").string()));
  EXPECT_FALSE(looks_like_image_file((dir / "missing.jpg").string()));
  EXPECT_FALSE(looks_like_image_file(dir.string()));
  auto r = decode_image_file((dir / "text.png").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().where.find("text.png"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(VisionLayout, FromInputShape) {
  EXPECT_EQ(layout_from_input_shape({1, 3, 224, 224}).value(), Layout::kNchw);
  EXPECT_EQ(layout_from_input_shape({-1, 3, -1, -1}).value(), Layout::kNchw);
  EXPECT_EQ(layout_from_input_shape({1, 224, 224, 3}).value(), Layout::kNhwc);
  auto both = layout_from_input_shape({1, 3, 3, 3});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().what.find("[1, 3, 3, 3]"), std::string::npos);
  EXPECT_FALSE(layout_from_input_shape({1, 1, 28, 28}).ok());
}

}  // namespace
