// Images in: decoding (JPEG, PNG, WebP) under declared limits, and the preprocessing a model
// declares in preprocessor_config.json (Hugging Face image processors) or glassbox.json, each
// step recorded with its value and source. docs/vision.md is the contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::vision {

// Limits checked before any pixel buffer is allocated (from the header of the file). Each
// refusal is kLimitExceeded naming the limit, its value and the image's declared size.
struct DecodeLimits {
  // Encoded input size. 64 MiB: ten times a 24-megapixel camera JPEG; bounds what one request
  // may make the process read. Risk: a huge lossless PNG scan is refused (raise it).
  uint64_t max_encoded_bytes = 64ull << 20;
  // Decoded pixels (width x height). Pillow's Image.MAX_IMAGE_PIXELS (89,478,485, "a 24-bit
  // 0.25 GB image") is the anchor; Pillow warns above it and raises above twice it. glassbox
  // refuses above it: a warning reaches no server caller. Also bounds every resize target.
  // Risk: a legitimate >89 MP photo is refused (raise it; decoding then takes 3-8 bytes/pixel).
  uint64_t max_pixels = 89478485;
  // Width and height each. 32768: no vision model's input is near it, and it refuses
  // degenerate strips (1 x 100000) whose resize to a shortest edge would explode (Pillow has
  // no such limit). Risk: panoramas wider than 32768 pixels are refused.
  uint32_t max_side = 32768;
  // Apply the EXIF Orientation tag (JPEG APP1, PNG eXIf, WebP EXIF): what transformers'
  // load_image does (PIL.ImageOps.exif_transpose) and transformers.js does (sharp rotate()),
  // so the model sees the picture upright as it saw it in training. Risk: a file whose tag is
  // wrong is rotated wrongly, as every viewer would show it.
  bool apply_exif_orientation = true;
};

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp };
const char* image_format_name(ImageFormat f);

// The format named by the file's magic bytes (JPEG FF D8 FF, PNG's 8-byte signature,
// RIFF....WEBP); kUnknown otherwise. Never guesses from a file name.
ImageFormat sniff_image_format(const uint8_t* data, size_t size);

// 8-bit RGB, rows top to bottom, HWC (3 bytes per pixel, no row padding).
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;
  uint8_t at(int x, int y, int c) const { return pixels[(static_cast<size_t>(y) * width + x) * 3 + c]; }
};

// What decoding did, for explain and for tests.
struct DecodeInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int stored_width = 0;            // as stored in the file, before orientation
  int stored_height = 0;
  std::string colour;              // "grey", "grey+alpha", "palette", "rgb", "rgba", "ycbcr"
  int bit_depth = 8;               // per channel in the file
  int exif_orientation = 1;        // 1..8 (1 = none or no tag)
  bool orientation_applied = false;
  bool alpha_dropped = false;      // the file had alpha (or tRNS); dropped like PIL convert("RGB")
};

struct DecodedImage {
  RgbImage image;
  DecodeInfo info;
};

// Decodes JPEG, PNG or WebP bytes to RGB. Alpha is dropped (PIL's convert("RGB") and
// transformers' convert_rgb drop it, not composite it), grey is replicated, palettes expanded,
// 16-bit RGB(A) reduced to its high byte (PIL's "RGB;16B" unpacking). Refused by name: CMYK/YCCK
// JPEG, 16-bit greyscale PNG, animated WebP, anything else (see docs/vision.md for why).
Result<DecodedImage> decode_image(const uint8_t* data, size_t size, const DecodeLimits& limits = {});

// Reads a file (its size checked against max_encoded_bytes before reading) and decodes it.
Result<DecodedImage> decode_image_file(const std::string& path, const DecodeLimits& limits = {});

// True when the file exists, is a regular file and starts with JPEG/PNG/WebP magic bytes
// (how `classify` tells an image argument from text: never by the name's extension).
bool looks_like_image_file(const std::string& path);

// --- preprocessing ---

// PIL resampling filters by their Image.Resampling codes.
enum class Resample { kNearest = 0, kLanczos = 1, kBilinear = 2, kBicubic = 3, kBox = 4, kHamming = 5 };
const char* resample_name(Resample r);

// Pillow's Image.resize(size, resample) on an RGB image, bit-exact: separable two-pass
// convolution (horizontal first), filter support scaled by the downscale factor (antialiasing),
// 22-bit fixed-point coefficients, round-half-up and clip to 0..255; nearest as Pillow's affine
// nearest (Pillow's ImagingScaleAffine: source = floor(in/out / 2 + x * in/out), accumulated).
RgbImage resize_pil(const RgbImage& in, int out_width, int out_height, Resample filter);

enum class Layout { kNchw, kNhwc };
const char* layout_name(Layout l);

// NCHW when dims[1] == 3, NHWC when dims[3] == 3 (a symbolic dim is < 0); anything else, or
// both, is refused naming the shape (glassbox.json "layout" then declares it).
Result<Layout> layout_from_input_shape(const std::vector<int64_t>& dims);

struct SizeSpec {
  enum class Kind { kHeightWidth, kShortestEdge, kLongestEdge };
  Kind kind = Kind::kHeightWidth;
  int64_t height = 0, width = 0;  // kHeightWidth
  int64_t edge = 0;               // kShortestEdge / kLongestEdge
};

// A detector-style letterbox (glassbox.json "letterbox"): scale to fit inside height x width
// keeping the aspect ratio, pad the rest with `fill`, centred (YOLO's rule).
struct Letterbox {
  int64_t height = 0, width = 0;
  uint8_t fill = 114;
};

// One preprocessing decision: the field, its value, where it came from (a file field, a class
// default of the declared processor type, a glassbox default) and, for defaults, the risk.
struct Step {
  std::string field;
  std::string value;
  std::string source;
  std::string risk;  // empty when the model's files declare it
};

// The preprocessing a model directory declares, every field resolved.
struct Preprocess {
  std::string processor_type;  // image_processor_type / feature_extractor_type
  bool do_convert_rgb = true;
  bool do_resize = true;
  SizeSpec size;
  Resample resample = Resample::kBilinear;
  std::optional<double> crop_pct;  // ConvNeXt: resize shortest edge to size/crop_pct, crop size
  bool do_center_crop = false;
  int64_t crop_height = 0, crop_width = 0;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  float mean[3] = {0.5f, 0.5f, 0.5f};
  float std[3] = {0.5f, 0.5f, 0.5f};
  bool do_pad = false;
  int64_t pad_height = 0, pad_width = 0;  // zeros at the bottom/right after normalization
  std::optional<Letterbox> letterbox;      // replaces resize and crop when declared
  std::optional<Layout> layout;            // glassbox.json "layout"; else from the model input
  std::vector<Step> steps;                 // every decision above with its source
};

// Reads MODEL_DIR/preprocessor_config.json (and glassbox.json's "vision" object, which wins).
// Unknown processor types, unknown fields that would change pixels, and resample codes
// glassbox lacks are refused by name.
Result<Preprocess> read_preprocess(const std::string& model_dir);

// The model's pixel tensor for one image: float32, [1, 3, H, W] (NCHW) or [1, H, W, 3].
struct PixelTensor {
  std::vector<int64_t> dims;
  std::vector<float> values;
  int resized_width = 0, resized_height = 0;  // after resize, before crop/pad
};

// Applies the declared steps in Hugging Face's order: resize (or letterbox), center crop,
// rescale, normalize, pad, layout. limits.max_pixels bounds every intermediate image.
Result<PixelTensor> preprocess(const RgbImage& image, const Preprocess& p, Layout layout,
                               const DecodeLimits& limits = {});

// The size every image is preprocessed to ([1, 3, H, W] or [1, H, W, 3]), found by preprocessing a square, a
// wide and a tall probe: when the declared steps end in a fixed size (a crop, a fixed resize) all three agree.
// kUnsupported, naming the sizes, when the size follows the image (no largest size is declared).
Result<std::vector<int64_t>> fixed_preprocessed_dims(const Preprocess& p, Layout layout, const DecodeLimits& limits = {});

}  // namespace glassbox::vision
