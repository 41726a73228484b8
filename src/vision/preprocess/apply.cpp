// The declared steps applied in Hugging Face's order (resize, centre crop, rescale, normalize,
// pad, channel layout), with Python transformers' arithmetic: sizes as its
// get_resize_output_image_size and center_crop compute them, rescale in float64 then float32,
// normalize in float32.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/vision.h"

namespace glassbox::vision {
namespace {

Status check_target(int64_t w, int64_t h, const DecodeLimits& limits, const std::string& step) {
  if (w <= 0 || h <= 0 || static_cast<uint64_t>(w) * static_cast<uint64_t>(h) > limits.max_pixels ||
      static_cast<uint64_t>(w) > limits.max_side || static_cast<uint64_t>(h) > limits.max_side)
    return make_error(ErrorCode::kLimitExceeded,
                      step + " would make a " + std::to_string(w) + " x " + std::to_string(h) +
                          " image, outside the limits (max_side " + std::to_string(limits.max_side) + ", max_pixels " +
                          std::to_string(limits.max_pixels) + ")",
                      {}, "check the image's aspect ratio and the model's declared size");
  return Status();
}

// transformers' get_resize_output_image_size(default_to_square=False): the short side becomes
// `edge`, the long side int(edge * long / short).
void shortest_edge_size(int w, int h, int64_t edge, int64_t& ow, int64_t& oh) {
  const int64_t s = std::min(w, h), l = std::max(w, h);
  const int64_t nl = static_cast<int64_t>(static_cast<double>(edge * l) / static_cast<double>(s));
  ow = w <= h ? edge : nl;
  oh = w <= h ? nl : edge;
}

// transformers' center_crop on HWC uint8: top = (H - ch) // 2; a crop larger than the image pads
// with zeros, the image placed at ceil((new - old) / 2).
RgbImage center_crop(const RgbImage& in, int64_t ch, int64_t cw) {
  auto floordiv = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t nh = std::max<int64_t>(ch, in.height), nw = std::max<int64_t>(cw, in.width);
  const int64_t top_pad = (nh - in.height + 1) / 2, left_pad = (nw - in.width + 1) / 2;
  const int64_t top = floordiv(in.height - ch, 2) + top_pad, left = floordiv(in.width - cw, 2) + left_pad;
  RgbImage out;
  out.width = static_cast<int>(cw);
  out.height = static_cast<int>(ch);
  out.pixels.assign(static_cast<size_t>(cw * ch * 3), 0);
  for (int64_t y = 0; y < ch; ++y)
    for (int64_t x = 0; x < cw; ++x) {
      const int64_t sy = top + y - top_pad, sx = left + x - left_pad;  // in the original image
      if (sy < 0 || sy >= in.height || sx < 0 || sx >= in.width) continue;
      std::memcpy(&out.pixels[static_cast<size_t>((y * cw + x) * 3)], &in.pixels[static_cast<size_t>((sy * in.width + sx) * 3)], 3);
    }
  return out;
}

// YOLO's letterbox: scale r = min(H/h, W/w), new size round(w r) x round(h r) (Python round,
// half to even), placed at (round(dw - 0.1), round(dh - 0.1)) on a `fill` canvas.
Result<RgbImage> letterbox(const RgbImage& in, const Letterbox& lb, Resample resample, const DecodeLimits& limits) {
  GB_RETURN_IF_ERROR(check_target(lb.width, lb.height, limits, "letterbox"));
  const double r = std::min(static_cast<double>(lb.height) / in.height, static_cast<double>(lb.width) / in.width);
  const int nw = std::max(1, static_cast<int>(std::nearbyint(in.width * r)));
  const int nh = std::max(1, static_cast<int>(std::nearbyint(in.height * r)));
  const RgbImage scaled = resize_pil(in, nw, nh, resample);
  const int left = static_cast<int>(std::nearbyint((lb.width - nw) / 2.0 - 0.1));
  const int top = static_cast<int>(std::nearbyint((lb.height - nh) / 2.0 - 0.1));
  RgbImage out;
  out.width = static_cast<int>(lb.width);
  out.height = static_cast<int>(lb.height);
  out.pixels.assign(static_cast<size_t>(out.width) * out.height * 3, lb.fill);
  for (int y = 0; y < nh; ++y)
    std::memcpy(&out.pixels[(static_cast<size_t>(y + top) * out.width + left) * 3],
                &scaled.pixels[static_cast<size_t>(y) * nw * 3], static_cast<size_t>(nw) * 3);
  return out;
}

Result<RgbImage> resize_step(const RgbImage& in, const Preprocess& p, const DecodeLimits& limits) {
  int64_t ow = 0, oh = 0;
  if (p.size.kind == SizeSpec::Kind::kHeightWidth) {
    ow = p.size.width, oh = p.size.height;
  } else if (p.size.kind == SizeSpec::Kind::kShortestEdge && p.crop_pct) {
    if (p.size.edge >= 384) {  // ConvNeXt: large sizes are squashed, no crop
      ow = oh = p.size.edge;
    } else {
      shortest_edge_size(in.width, in.height, static_cast<int64_t>(p.size.edge / *p.crop_pct), ow, oh);
      GB_RETURN_IF_ERROR(check_target(ow, oh, limits, "resize (shortest edge / crop_pct)"));
      return center_crop(resize_pil(in, static_cast<int>(ow), static_cast<int>(oh), p.resample), p.size.edge, p.size.edge);
    }
  } else if (p.size.kind == SizeSpec::Kind::kShortestEdge) {
    shortest_edge_size(in.width, in.height, p.size.edge, ow, oh);
  } else {
    return make_error(ErrorCode::kUnsupported, "longest_edge resize is not implemented");
  }
  GB_RETURN_IF_ERROR(check_target(ow, oh, limits, "resize"));
  return resize_pil(in, static_cast<int>(ow), static_cast<int>(oh), p.resample);
}

}  // namespace

const char* layout_name(Layout l) { return l == Layout::kNchw ? "nchw" : "nhwc"; }

Result<Layout> layout_from_input_shape(const std::vector<int64_t>& d) {
  const bool nchw = d.size() == 4 && d[1] == 3, nhwc = d.size() == 4 && d[3] == 3;
  if (nchw != nhwc) return nchw ? Layout::kNchw : Layout::kNhwc;
  std::string s;
  for (auto v : d) s += (s.empty() ? "" : ", ") + (v < 0 ? std::string("?") : std::to_string(v));
  return make_error(ErrorCode::kUnsupported,
                    "cannot tell the channel layout of input shape [" + s + "]: 3 channels must be dim 1 (NCHW) or dim "
                                                                            "3 (NHWC), one of them",
                    {}, "declare glassbox.json {\"vision\": {\"layout\": \"nchw\"}} (or \"nhwc\")");
}

Result<PixelTensor> preprocess(const RgbImage& image, const Preprocess& p, Layout layout, const DecodeLimits& limits) {
  PixelTensor t;
  RgbImage img = image;
  if (p.letterbox) {
    GB_ASSIGN_OR_RETURN(img, letterbox(image, *p.letterbox, p.resample, limits));
  } else if (p.do_resize) {
    GB_ASSIGN_OR_RETURN(img, resize_step(image, p, limits));
  }
  t.resized_width = img.width;
  t.resized_height = img.height;
  if (!p.letterbox && p.do_center_crop) {
    GB_RETURN_IF_ERROR(check_target(p.crop_width, p.crop_height, limits, "center crop"));
    img = center_crop(img, p.crop_height, p.crop_width);
  }
  const int64_t H = p.do_pad ? std::max<int64_t>(p.pad_height, img.height) : img.height;
  const int64_t W = p.do_pad ? std::max<int64_t>(p.pad_width, img.width) : img.width;
  GB_RETURN_IF_ERROR(check_target(W, H, limits, "pad"));
  t.dims = layout == Layout::kNchw ? std::vector<int64_t>{1, 3, H, W} : std::vector<int64_t>{1, H, W, 3};
  t.values.assign(static_cast<size_t>(H * W * 3), 0.0f);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const uint8_t u = img.at(x, y, c);
        float v = p.do_rescale ? static_cast<float>(static_cast<double>(u) * p.rescale_factor) : static_cast<float>(u);
        if (p.do_normalize) v = (v - p.mean[c]) / p.std[c];
        const size_t at = layout == Layout::kNchw ? (static_cast<size_t>(c) * H + y) * W + x
                                                  : (static_cast<size_t>(y) * W + x) * 3 + c;
        t.values[at] = v;
      }
  return t;
}

Result<std::vector<int64_t>> fixed_preprocessed_dims(const Preprocess& p, Layout layout, const DecodeLimits& limits) {
  std::vector<std::vector<int64_t>> sizes;
  for (const auto& [w, h] : {std::pair{96, 96}, std::pair{384, 96}, std::pair{96, 384}}) {
    RgbImage probe{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3, 128)};
    GB_ASSIGN_OR_RETURN(PixelTensor t, preprocess(probe, p, layout, limits));
    sizes.push_back(t.dims);
  }
  if (sizes[0] == sizes[1] && sizes[0] == sizes[2]) return sizes[0];
  std::string made;
  for (const auto& d : sizes) {
    made += made.empty() ? "[" : ", [";
    for (size_t i = 0; i < d.size(); ++i) made += (i ? "," : "") + std::to_string(d[i]);
    made += "]";
  }
  return make_error(ErrorCode::kUnsupported,
                    "the preprocessed size follows the image (96x96, 384x96 and 96x384 probes made " + made +
                        "): the model declares no largest input size",
                    "preprocessor_config.json", "a memory budget needs a fixed size: declare a center crop or a fixed resize");
}

}  // namespace glassbox::vision
