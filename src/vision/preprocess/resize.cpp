// Pillow's Image.resize for 8-bit RGB, reproduced step for step (libImaging/Resample.c and
// Geometry.c): the same filters and supports, the same coefficient rounding, the same order of
// passes, so the pixels are equal to PIL's, not merely close.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "glassbox/vision.h"

namespace glassbox::vision {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double box_filter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }
double bilinear_filter(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}
double hamming_filter(double x) {
  x = std::fabs(x);
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x = x * M_PI;
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x));  // float constants, as Pillow writes them
}
double bicubic_filter(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}
double sinc_filter(double x) {
  if (x == 0.0) return 1.0;
  x = x * M_PI;
  return std::sin(x) / x;
}
double lanczos_filter(double x) { return (-3.0 <= x && x < 3.0) ? sinc_filter(x) * sinc_filter(x / 3) : 0.0; }

struct Filter {
  double (*fn)(double);
  double support;
};

Filter filter_of(Resample r) {
  switch (r) {
    case Resample::kBox: return {box_filter, 0.5};
    case Resample::kBilinear: return {bilinear_filter, 1.0};
    case Resample::kHamming: return {hamming_filter, 1.0};
    case Resample::kBicubic: return {bicubic_filter, 2.0};
    case Resample::kLanczos: return {lanczos_filter, 3.0};
    case Resample::kNearest: break;
  }
  return {bilinear_filter, 1.0};  // unreachable: nearest takes its own path
}

// One output position's source window and 22-bit fixed-point weights.
struct Coeffs {
  int ksize = 0;
  std::vector<int> bounds;   // [xmin, count] per output position
  std::vector<int32_t> k;    // ksize weights per output position
};

Coeffs precompute(int in_size, int out_size, const Filter& f) {
  const double scale = static_cast<double>(static_cast<float>(in_size)) / out_size;  // box is float in Pillow
  const double filterscale = std::max(scale, 1.0);
  const double support = f.support * filterscale;
  Coeffs c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  c.k.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> w(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = f.fn((x + xmin - center + 0.5) * ss);
      ww += w[x];
    }
    for (int x = 0; x < xmax; ++x) {
      const double v = ww != 0.0 ? w[x] / ww : w[x];
      c.k[static_cast<size_t>(xx) * c.ksize + x] =
          v < 0 ? static_cast<int>(-0.5 + v * (1 << kPrecisionBits)) : static_cast<int>(0.5 + v * (1 << kPrecisionBits));
    }
    c.bounds[xx * 2] = xmin;
    c.bounds[xx * 2 + 1] = xmax;
  }
  return c;
}

inline uint8_t clip8(int v) { return static_cast<uint8_t>(std::clamp(v >> kPrecisionBits, 0, 255)); }

// Horizontal pass over rows [row0, row0 + out.height) of `in`.
void resample_horizontal(const RgbImage& in, int row0, const Coeffs& c, RgbImage& out) {
  for (int y = 0; y < out.height; ++y) {
    const uint8_t* src = &in.pixels[static_cast<size_t>(y + row0) * in.width * 3];
    uint8_t* dst = &out.pixels[static_cast<size_t>(y) * out.width * 3];
    for (int xx = 0; xx < out.width; ++xx) {
      const int xmin = c.bounds[xx * 2], n = c.bounds[xx * 2 + 1];
      const int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
      int s0 = 1 << (kPrecisionBits - 1), s1 = s0, s2 = s0;
      for (int x = 0; x < n; ++x) {
        const uint8_t* p = src + (x + xmin) * 3;
        s0 += p[0] * k[x];
        s1 += p[1] * k[x];
        s2 += p[2] * k[x];
      }
      dst[xx * 3] = clip8(s0);
      dst[xx * 3 + 1] = clip8(s1);
      dst[xx * 3 + 2] = clip8(s2);
    }
  }
}

// Vertical pass; bounds are relative to the first row of `in`.
void resample_vertical(const RgbImage& in, const Coeffs& c, int row_shift, RgbImage& out) {
  const size_t stride = static_cast<size_t>(in.width) * 3;
  for (int yy = 0; yy < out.height; ++yy) {
    const int ymin = c.bounds[yy * 2] - row_shift, n = c.bounds[yy * 2 + 1];
    const int32_t* k = &c.k[static_cast<size_t>(yy) * c.ksize];
    uint8_t* dst = &out.pixels[static_cast<size_t>(yy) * out.width * 3];
    for (size_t i = 0; i < stride; ++i) {
      int s = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < n; ++y) s += in.pixels[static_cast<size_t>(y + ymin) * stride + i] * k[y];
      dst[i] = clip8(s);
    }
  }
}

RgbImage blank(int w, int h) {
  RgbImage r;
  r.width = w;
  r.height = h;
  r.pixels.resize(static_cast<size_t>(w) * h * 3);
  return r;
}

// Pillow's ImagingScaleAffine for NEAREST: the source position starts at scale / 2 and is
// advanced by adding scale (accumulated in double, as Pillow does: not (x + 0.5) * scale).
RgbImage resize_nearest(const RgbImage& in, int ow, int oh) {
  RgbImage out = blank(ow, oh);
  const double ax = static_cast<double>(in.width) / ow, ay = static_cast<double>(in.height) / oh;
  std::vector<int> xs(ow);
  double xo = ax * 0.5;
  for (int x = 0; x < ow; ++x, xo += ax) xs[x] = std::min(static_cast<int>(xo), in.width - 1);
  double yo = ay * 0.5;
  for (int y = 0; y < oh; ++y, yo += ay) {
    const int sy = std::min(static_cast<int>(yo), in.height - 1);
    for (int x = 0; x < ow; ++x)
      std::memcpy(&out.pixels[(static_cast<size_t>(y) * ow + x) * 3],
                  &in.pixels[(static_cast<size_t>(sy) * in.width + xs[x]) * 3], 3);
  }
  return out;
}

}  // namespace

const char* resample_name(Resample r) {
  switch (r) {
    case Resample::kNearest: return "nearest";
    case Resample::kLanczos: return "lanczos";
    case Resample::kBilinear: return "bilinear";
    case Resample::kBicubic: return "bicubic";
    case Resample::kBox: return "box";
    case Resample::kHamming: return "hamming";
  }
  return "unknown";
}

RgbImage resize_pil(const RgbImage& in, int ow, int oh, Resample r) {
  if (ow == in.width && oh == in.height) return in;  // Image.resize returns a copy
  if (r == Resample::kNearest) return resize_nearest(in, ow, oh);
  const Filter f = filter_of(r);
  const bool need_h = ow != in.width, need_v = oh != in.height;
  const Coeffs cv = precompute(in.height, oh, f);
  const int first = cv.bounds[0];
  const int last = cv.bounds[oh * 2 - 2] + cv.bounds[oh * 2 - 1];
  if (!need_h) {
    RgbImage out = blank(ow, oh);
    resample_vertical(in, cv, 0, out);
    return out;
  }
  const Coeffs ch = precompute(in.width, ow, f);
  RgbImage tmp = blank(ow, last - first);  // only the rows the vertical pass reads
  resample_horizontal(in, first, ch, tmp);
  if (!need_v) return tmp;
  RgbImage out = blank(ow, oh);
  resample_vertical(tmp, cv, first, out);
  return out;
}

}  // namespace glassbox::vision
