// OCR pipeline: decode -> det resize/normalize -> DB boxes -> crop -> angle classifier -> recogniser -> CTC.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "glassbox/ocr.h"
#include "vision/ocr/db_boxes.h"

namespace glassbox::vision::ocr {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kPaddle = "PaddleOCR's inference defaults (tools/infer/utility.py; FastDeploy's PP-OCR docs)";

// A numeric parameter: its default, why, and where the default comes from; glassbox.json "ocr" may set it.
struct Param {
  const char* name;
  double value;
  const char* reason;
  const char* origin = nullptr;  // where the default comes from; nullptr: PaddleOCR's defaults (kPaddle)
};

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

Result<json> read_json_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read " + p.filename().string(), p.string());
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", p.string());
  return j;
}

// Channel c (0 = B, 1 = G, 2 = R: PaddleOCR feeds OpenCV's BGR order) of pixel (x, y), normalized.
struct Norm {
  float mean[3], std[3];  // in BGR order, applied to value / 255
};

void fill_chw(const RgbImage& im, const Norm& n, int out_w, float* dst) {
  const size_t plane = static_cast<size_t>(im.height) * out_w;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width && x < out_w; ++x)
        dst[c * plane + static_cast<size_t>(y) * out_w + x] = (im.at(x, y, 2 - c) / 255.f - n.mean[c]) / n.std[c];
}

float sample(const RgbImage& im, double x, double y, int c) {
  x = std::clamp(x, 0.0, im.width - 1.0);
  y = std::clamp(y, 0.0, im.height - 1.0);
  const int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  const int x1 = std::min(x0 + 1, im.width - 1), y1 = std::min(y0 + 1, im.height - 1);
  const double fx = x - x0, fy = y - y0;
  return static_cast<float>((1 - fy) * ((1 - fx) * im.at(x0, y0, c) + fx * im.at(x1, y0, c)) +
                            fy * ((1 - fx) * im.at(x0, y1, c) + fx * im.at(x1, y1, c)));
}

// The box's content as an upright image: width = longer of the top/bottom edges, height = longer of the
// side edges (truncated), bilinear over the quad, border replicated; turned 90 degrees counter-clockwise
// when height >= 1.5 x width (a vertical line).
RgbImage rotate_crop(const RgbImage& im, const Quad& q) {
  auto d = [](const Point& a, const Point& b) { return std::hypot(a.x - b.x, a.y - b.y); };
  const int w = static_cast<int>(std::max(d(q[0], q[1]), d(q[2], q[3])));
  const int h = static_cast<int>(std::max(d(q[0], q[3]), d(q[1], q[2])));
  RgbImage out;
  if (w < 1 || h < 1) return out;
  out.width = w, out.height = h;
  out.pixels.resize(static_cast<size_t>(w) * h * 3);
  for (int v = 0; v < h; ++v)
    for (int u = 0; u < w; ++u) {
      const double s = static_cast<double>(u) / w, t = static_cast<double>(v) / h;
      const double x = (1 - s) * (1 - t) * q[0].x + s * (1 - t) * q[1].x + s * t * q[2].x + (1 - s) * t * q[3].x;
      const double y = (1 - s) * (1 - t) * q[0].y + s * (1 - t) * q[1].y + s * t * q[2].y + (1 - s) * t * q[3].y;
      for (int c = 0; c < 3; ++c)
        out.pixels[(static_cast<size_t>(v) * w + u) * 3 + c] =
            static_cast<uint8_t>(std::clamp(std::lround(sample(im, x, y, c)), 0L, 255L));
    }
  if (h >= 1.5 * w) {
    RgbImage r;
    r.width = h, r.height = w;
    r.pixels.resize(out.pixels.size());
    for (int y = 0; y < r.height; ++y)
      for (int x = 0; x < r.width; ++x)
        for (int c = 0; c < 3; ++c) r.pixels[(static_cast<size_t>(y) * r.width + x) * 3 + c] = out.at(w - 1 - y, x, c);
    return r;
  }
  return out;
}

RgbImage rotate_180(const RgbImage& im) {
  RgbImage r = im;
  const size_t n = static_cast<size_t>(im.width) * im.height;
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) r.pixels[i * 3 + c] = im.pixels[(n - 1 - i) * 3 + c];
  return r;
}

}  // namespace

struct OcrPipeline::Impl {
  std::optional<Session> det, rec, cls;
  std::vector<std::string> dict;  // index 1.. of the recogniser's classes; 0 is the CTC blank
  DecodeLimits limits;
  std::vector<Param> params;
  std::vector<Step> steps;
  double p(const char* name) const {
    for (const auto& x : params)
      if (std::string(x.name) == name) return x.value;
    return 0;
  }
  Result<std::vector<float>> run_one(const Session& s, const char* what, std::vector<int64_t> dims,
                                     std::vector<float> data, std::vector<int64_t>* out_dims) const;
  int batch_num(const char* name) const { return std::max(1, static_cast<int>(p(name))); }
  Result<std::vector<std::pair<bool, float>>> classify(const std::vector<const RgbImage*>& crops) const;
  Result<std::vector<std::pair<std::string, float>>> recognise(const std::vector<const RgbImage*>& crops) const;
  Status turn_upside_down(std::vector<RgbImage>& crops, std::vector<OcrLine>& lines) const;
  Result<std::vector<std::pair<std::string, float>>> recognise_all(const std::vector<RgbImage>& crops) const;
  int64_t rec_width(double widest_ratio) const;
  Result<std::vector<DbBox>> detect(const RgbImage& im, int* dw, int* dh) const;
};

Result<std::vector<float>> OcrPipeline::Impl::run_one(const Session& s, const char* what, std::vector<int64_t> dims,
                                                      std::vector<float> data, std::vector<int64_t>* out_dims) const {
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, dims));
  std::copy(data.begin(), data.end(), t.mutable_data<float>());
  auto outs = s.run({{s.inputs()[0].name, std::move(t)}});
  if (!outs.ok()) return std::move(outs).take_error().with_where(std::string("OCR ") + what + " model");
  const Tensor& o = (*outs)[0].tensor;
  if (o.dtype() != DataType::kFloat32)
    return make_error(ErrorCode::kInvalidModel, std::string("the ") + what + " model's output is not float32", what);
  *out_dims = o.shape();
  return std::vector<float>(o.data<float>(), o.data<float>() + o.numel());
}

Result<std::vector<DbBox>> OcrPipeline::Impl::detect(const RgbImage& im, int* dw, int* dh) const {
  // Scale so the longer side is at most det_limit_side_len, then each side to a multiple of 32 (rounded, >= 32).
  const double limit = p("det_limit_side_len");
  const double ratio = std::max(im.width, im.height) > limit ? limit / std::max(im.width, im.height) : 1.0;
  *dw = std::max(32, static_cast<int>(std::lround(im.width * ratio / 32)) * 32);
  *dh = std::max(32, static_cast<int>(std::lround(im.height * ratio / 32)) * 32);
  const RgbImage r = resize_pil(im, *dw, *dh, Resample::kBilinear);
  std::vector<float> x(static_cast<size_t>(3) * *dw * *dh);
  fill_chw(r, Norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}}, *dw, x.data());
  std::vector<int64_t> od;
  GB_ASSIGN_OR_RETURN(auto prob, run_one(*det, "detection", {1, 3, *dh, *dw}, std::move(x), &od));
  if (od.size() != 4 || od[0] != 1 || od[1] != 1 || od[2] != *dh || od[3] != *dw)
    return make_error(ErrorCode::kInvalidModel, "the detection model's output is not a [1,1,H,W] probability map", "det");
  DbParams db;
  db.thresh = static_cast<float>(p("det_db_thresh"));
  db.box_thresh = static_cast<float>(p("det_db_box_thresh"));
  db.unclip_ratio = p("det_db_unclip_ratio");
  db.min_size = p("det_db_min_size");
  db.max_candidates = static_cast<int>(p("det_db_max_candidates"));
  return db_boxes(prob.data(), *dw, *dh, db);
}

// The classifier's and recogniser's input: each crop resized (bilinear) to height 48 and width ceil(48 * w / h)
// clamped to [1, content_max], BGR (v/255 - 0.5) / 0.5, zero-padded right to `width`; crops one after another.
static std::vector<float> crop_batch(const std::vector<const RgbImage*>& crops, int width, int content_max) {
  const int H = 48;
  const size_t per = static_cast<size_t>(3) * H * width;
  std::vector<float> x(per * crops.size(), 0.f);
  for (size_t i = 0; i < crops.size(); ++i) {
    const RgbImage& crop = *crops[i];
    const int rw = std::clamp(static_cast<int>(std::ceil(H * static_cast<double>(crop.width) / crop.height)), 1, content_max);
    fill_chw(resize_pil(crop, rw, H, Resample::kBilinear), Norm{{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}}, width, x.data() + i * per);
  }
  return x;
}

// cls input: n crops (at most cls_batch_num) per run, each 48 x ceil(48 * w / h) up to 192, zero-padded right;
// (v/255 - 0.5) / 0.5. Output [n, 2]: scores of '0' and '180'.
Result<std::vector<std::pair<bool, float>>> OcrPipeline::Impl::classify(const std::vector<const RgbImage*>& crops) const {
  const int H = 48, W = 192;
  const auto n = static_cast<int64_t>(crops.size());
  std::vector<int64_t> od;
  GB_ASSIGN_OR_RETURN(auto y, run_one(*cls, "angle classifier", {n, 3, H, W}, crop_batch(crops, W, W), &od));
  if (od.size() != 2 || od[0] != n || od[1] != 2)
    return make_error(ErrorCode::kInvalidModel, "the angle classifier's output is not [n,2] ('0','180')", "cls");
  std::vector<std::pair<bool, float>> out;
  for (int64_t i = 0; i < n; ++i) {
    const float a = y[2 * i], b = y[2 * i + 1];
    out.emplace_back(b > a && b > p("cls_thresh"), std::max(a, b));
  }
  return out;
}

// The recogniser's input width for a batch whose widest crop has w/h = widest_ratio: 48 * max(rec_min_width / 48,
// widest_ratio) (PaddleOCR), rounded up to a multiple of rec_width_multiple (glassbox: fewer distinct shapes).
int64_t OcrPipeline::Impl::rec_width(double widest_ratio) const {
  const auto w = static_cast<int64_t>(48 * std::max(p("rec_min_width") / 48, widest_ratio));
  const int64_t m = std::max<int64_t>(1, static_cast<int64_t>(p("rec_width_multiple")));
  return (w + m - 1) / m * m;
}

// rec input: n crops (at most rec_batch_num, similar w/h) per run, height 48, width rec_width(the batch's widest
// w/h); each crop's content ceil(48 * w / h) wide (at most PaddleOCR's unrounded width), zero-padded right;
// (v/255 - 0.5) / 0.5. Output [n, T, classes] probabilities -> CTC greedy decoding per crop.
Result<std::vector<std::pair<std::string, float>>> OcrPipeline::Impl::recognise(const std::vector<const RgbImage*>& crops) const {
  const int H = 48;
  double widest = 0;
  for (const RgbImage* c : crops) widest = std::max(widest, static_cast<double>(c->width) / c->height);
  const int64_t W = rec_width(widest);
  const int paddle_w = static_cast<int>(H * std::max(p("rec_min_width") / H, widest));
  const auto n = static_cast<int64_t>(crops.size());
  std::vector<int64_t> od;
  GB_ASSIGN_OR_RETURN(auto y, run_one(*rec, "recognition", {n, 3, H, W}, crop_batch(crops, static_cast<int>(W), paddle_w), &od));
  if (od.size() != 3 || od[0] != n || od[2] != static_cast<int64_t>(dict.size()) + 1)
    return make_error(ErrorCode::kInvalidModel,
                      "the recognition model's classes (" + (od.size() == 3 ? std::to_string(od[2]) : std::string("?")) +
                          ") are not blank + the dictionary's " + std::to_string(dict.size()) + " entries",
                      "rec", "use the dictionary the recogniser was trained with");
  std::vector<std::pair<std::string, float>> out;
  for (int64_t i = 0; i < n; ++i) {
    std::string text;
    double sum = 0;
    int kept = 0;
    int64_t prev = -1;
    for (int64_t t = 0; t < od[1]; ++t) {
      const float* row = y.data() + (i * od[1] + t) * od[2];
      const int64_t k = std::max_element(row, row + od[2]) - row;
      if (k != 0 && k != prev) text += dict[static_cast<size_t>(k - 1)], sum += row[k], ++kept;
      prev = k;
    }
    out.emplace_back(std::move(text), kept ? static_cast<float>(sum / kept) : 0.f);
  }
  return out;
}

// The numeric parameters (glassbox.json "ocr" may set each) and the fixed stages, as explain lists them.
Status declare_parameters(const json& o, const std::string& model_dir, OcrPipeline::Impl& im) {
  auto* m = &im;
  m->params = {
      {"det_limit_side_len", 960, "longer image side scaled down to this before detection (then each side to a multiple of 32, rounded)"},
      {"det_db_thresh", 0.3, "probability above which a map pixel is text"},
      {"det_db_box_thresh", 0.6, "boxes whose mean probability is lower are dropped"},
      {"det_db_unclip_ratio", 1.5, "box grown by area x ratio / perimeter (DB shrinks text regions in training)"},
      {"det_db_min_size", 3, "boxes with a shorter side (map pixels) are dropped; after unclip: min_size + 2"},
      {"det_db_max_candidates", 1000, "text regions examined per image"},
      {"cls_thresh", 0.9, "a crop is turned 180 degrees when the classifier says '180' with more than this"},
      {"cls_batch_num", 6, "crops per angle-classifier run"},
      {"rec_min_width", 320, "recogniser input width at least this (rec_image_shape 3,48,320); wider crops keep their ratio"},
      {"rec_batch_num", 6, "crops per recogniser run, sorted by w/h and padded to the batch's widest"},
      {"rec_width_multiple", 32,
       "recogniser input width rounded up to a multiple of this: a wide line adds a new input shape (a plan, "
       "specialized at its first run) only per 32 px instead of per pixel; 1 = PaddleOCR's exact width",
       "glassbox default"},
      {"drop_score", 0.5, "lines whose recognition score is lower are dropped"},
  };
  for (auto& prm : m->params) {
    std::string source = std::string("default: ") + (prm.origin ? prm.origin : kPaddle);
    if (o.contains(prm.name)) {
      if (!o[prm.name].is_number())
        return make_error(ErrorCode::kInvalidModel, std::string("ocr.") + prm.name + " is not a number", model_dir);
      prm.value = o[prm.name].get<double>();
      source = "glassbox.json";
    }
    m->steps.push_back({std::string("ocr.") + prm.name, fmt(prm.value), source + " - " + prm.reason, ""});
  }
  const std::vector<Step> fixed = {
      {"ocr.det.input", "BGR, (v/255 - [0.485,0.456,0.406]) / [0.229,0.224,0.225], NCHW", std::string(kPaddle) + " (NormalizeImage on OpenCV's BGR)", ""},
      {"ocr.resize", "Pillow bilinear (antialiased on downscale)", "glassbox's exact resize",
       "PaddleOCR uses cv2.INTER_LINEAR (no antialiasing): pixels differ on downscale"},
      {"ocr.boxes", "8-connected regions of the thresholded map -> min-area rectangle -> mean-probability score -> "
                    "rectangle grown by the unclip distance -> scaled to the image, rounded, clipped; boxes <= 3 px dropped",
       "PaddleOCR DBPostProcess (box_type quad, score_mode fast)",
       "PaddleOCR takes OpenCV contours (RETR_LIST: holes too) and pyclipper's integer offset: boxes may differ by ~1 px"},
      {"ocr.order", "top edge, then left to right within 10 px", "PaddleOCR sorted_boxes", ""},
      {"ocr.crop", "quad -> upright image (longer edges, bilinear, border replicated); turned 90 degrees when height >= 1.5 width",
       "PaddleOCR get_rotate_crop_image", "PaddleOCR warps with cv2.INTER_CUBIC"},
      {"ocr.cls.input", "batches of cls_batch_num crops, each 48 x ceil(48 w/h) up to 192, zero-padded; BGR (v/255 - 0.5) / 0.5; labels '0','180'", kPaddle, ""},
      {"ocr.rec.input", "crops sorted by w/h, batches of rec_batch_num; 48 x max(rec_min_width, 48 x the batch's widest w/h) "
                        "rounded up to rec_width_multiple, each content ceil(48 w/h) wide, zero-padded; BGR (v/255 - 0.5) / 0.5",
       kPaddle, "a crop's padding depends on the crops batched with it (as in PaddleOCR) and on rec_width_multiple (not in PaddleOCR)"},
      {"ocr.decode", "CTC greedy: argmax per step, repeats merged, blank (class 0) dropped; class k = dictionary line k, "
                     "last class ' '; score = mean of the kept maxima",
       std::string(kPaddle) + " (use_space_char)", ""},
  };
  m->steps.insert(m->steps.end(), fixed.begin(), fixed.end());
  // A key nothing reads (a typo such as "det_db_tresh") is refused by name, never ignored.
  for (const auto& [key, value] : o.items()) {
    bool known = key == "det" || key == "rec" || key == "cls" || key == "dict";
    for (const auto& prm : m->params) known = known || key == prm.name;
    if (!known)
      return make_error(ErrorCode::kInvalidModel, "glassbox.json ocr." + key + " is not an OCR setting", model_dir,
                        "known: det, rec, cls, dict and the parameters `glassbox explain MODEL_DIR` lists");
  }
  return Status{};
}

bool is_ocr_model_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  auto g = read_json_file(fs::path(dir) / "glassbox.json");
  return g.ok() && g->contains("ocr") && (*g)["ocr"].is_object();
}

Result<OcrPipeline> OcrPipeline::load(const std::string& model_dir, const OcrOptions& options) {
  auto m = std::make_unique<Impl>();
  m->limits = options.limits;
  const fs::path dir(model_dir);
  GB_ASSIGN_OR_RETURN(json g, read_json_file(dir / "glassbox.json"));
  if (!g.contains("ocr") || !g["ocr"].is_object())
    return make_error(ErrorCode::kInvalidModel, "glassbox.json has no \"ocr\" object naming det/rec/cls/dict",
                      (dir / "glassbox.json").string(), "scripts/make_ocr_model_dir.py writes one");
  const json& o = g["ocr"];
  auto file = [&](const char* key, bool required) -> Result<std::string> {
    if (!o.contains(key)) {
      if (required) return make_error(ErrorCode::kInvalidModel, std::string("glassbox.json ocr.") + key + " is missing", model_dir);
      return std::string();
    }
    if (!o[key].is_string()) return make_error(ErrorCode::kInvalidModel, std::string("ocr.") + key + " is not a file name", model_dir);
    const fs::path f = dir / o[key].get<std::string>();
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) return make_error(ErrorCode::kNotFound, std::string("ocr.") + key + ": no file " + f.filename().string(), model_dir);
    m->steps.push_back({std::string("ocr.") + key, f.filename().string(), "glassbox.json", ""});
    return f.string();
  };
  GB_ASSIGN_OR_RETURN(std::string det, file("det", true));
  GB_ASSIGN_OR_RETURN(std::string rec, file("rec", true));
  GB_ASSIGN_OR_RETURN(std::string cls, file("cls", false));
  GB_ASSIGN_OR_RETURN(std::string dict, file("dict", true));
  if (cls.empty()) m->steps.push_back({"ocr.cls", "none", "glassbox.json names no angle classifier", "upside-down lines are read upside down"});
  GB_RETURN_IF_ERROR(declare_parameters(o, model_dir, *m));
  {
    std::ifstream in(dict);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      m->dict.push_back(line);
    }
    m->dict.push_back(" ");
    m->steps.push_back({"ocr.dict", std::to_string(m->dict.size() - 1) + " entries + ' '", "glassbox.json ocr.dict", ""});
  }
  GB_ASSIGN_OR_RETURN(Session ds, Session::load(det, options.session));
  m->det.emplace(std::move(ds));
  GB_ASSIGN_OR_RETURN(Session rs, Session::load(rec, options.session));
  m->rec.emplace(std::move(rs));
  if (!cls.empty()) {
    GB_ASSIGN_OR_RETURN(Session cs, Session::load(cls, options.session));
    m->cls.emplace(std::move(cs));
  }
  return OcrPipeline(std::move(m));
}

Result<OcrResult> OcrPipeline::run(const RgbImage& image) const {
  const Impl& m = *impl_;
  OcrResult res;
  res.width = image.width, res.height = image.height;
  GB_ASSIGN_OR_RETURN(auto boxes, m.detect(image, &res.det_width, &res.det_height));
  std::vector<Quad> quads;
  std::vector<float> scores;
  for (const auto& b : boxes) {
    Quad q;
    for (int k = 0; k < 4; ++k) {
      q[k].x = std::clamp(std::round(b.quad[k].x * image.width / res.det_width), 0.0, image.width - 1.0);
      q[k].y = std::clamp(std::round(b.quad[k].y * image.height / res.det_height), 0.0, image.height - 1.0);
    }
    if (std::hypot(q[0].x - q[1].x, q[0].y - q[1].y) <= 3 || std::hypot(q[0].x - q[3].x, q[0].y - q[3].y) <= 3) continue;
    quads.push_back(q);
    scores.push_back(b.score);
  }
  res.boxes_found = static_cast<int>(quads.size());
  std::vector<size_t> order;
  sort_reading_order(quads, order);
  // Crops in reading order; the angle classifier and the recogniser take them in batches.
  std::vector<RgbImage> crops;
  std::vector<OcrLine> lines;
  for (size_t i : order) {
    RgbImage crop = rotate_crop(image, quads[i]);
    if (crop.width == 0) continue;
    OcrLine line;
    line.box = quads[i];
    line.box_score = scores[i];
    crops.push_back(std::move(crop));
    lines.push_back(std::move(line));
  }
  if (m.cls) GB_RETURN_IF_ERROR(m.turn_upside_down(crops, lines));
  GB_ASSIGN_OR_RETURN(auto texts, m.recognise_all(crops));
  for (size_t k = 0; k < lines.size(); ++k) {
    if (texts[k].second < m.p("drop_score")) continue;
    lines[k].text = std::move(texts[k].first);
    lines[k].score = texts[k].second;
    res.lines.push_back(std::move(lines[k]));
  }
  return res;
}

// The angle classifier over all crops, cls_batch_num at a time; crops it calls '180' are turned.
Status OcrPipeline::Impl::turn_upside_down(std::vector<RgbImage>& crops, std::vector<OcrLine>& lines) const {
  const size_t batch = static_cast<size_t>(batch_num("cls_batch_num"));
  for (size_t b = 0; b < crops.size(); b += batch) {
    std::vector<const RgbImage*> part;
    for (size_t k = b; k < std::min(crops.size(), b + batch); ++k) part.push_back(&crops[k]);
    GB_ASSIGN_OR_RETURN(auto c, classify(part));
    for (size_t k = 0; k < c.size(); ++k)
      if (c[k].first) crops[b + k] = rotate_180(crops[b + k]), lines[b + k].rotated_180 = true;
  }
  return {};
}

// The recogniser over all crops: sorted by w/h (stable), rec_batch_num at a time; results in the crops' order.
Result<std::vector<std::pair<std::string, float>>> OcrPipeline::Impl::recognise_all(const std::vector<RgbImage>& crops) const {
  std::vector<size_t> by_ratio(crops.size());
  for (size_t k = 0; k < by_ratio.size(); ++k) by_ratio[k] = k;
  auto ratio = [&](size_t k) { return static_cast<double>(crops[k].width) / crops[k].height; };
  std::stable_sort(by_ratio.begin(), by_ratio.end(), [&](size_t a, size_t b) { return ratio(a) < ratio(b); });
  std::vector<std::pair<std::string, float>> out(crops.size());
  const size_t batch = static_cast<size_t>(batch_num("rec_batch_num"));
  for (size_t b = 0; b < by_ratio.size(); b += batch) {
    std::vector<const RgbImage*> part;
    for (size_t k = b; k < std::min(by_ratio.size(), b + batch); ++k) part.push_back(&crops[by_ratio[k]]);
    GB_ASSIGN_OR_RETURN(auto r, recognise(part));
    for (size_t k = 0; k < r.size(); ++k) out[by_ratio[b + k]] = std::move(r[k]);
  }
  return out;
}

Result<OcrResult> OcrPipeline::run_file(const std::string& path) const {
  auto d = decode_image_file(path, impl_->limits);
  if (!d.ok()) return std::move(d).take_error().with_where(path);
  auto r = run(d->image);
  if (!r.ok()) return std::move(r).take_error().with_where(path);
  return r;
}

OcrPipeline::OcrPipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OcrPipeline::OcrPipeline(OcrPipeline&&) noexcept = default;
OcrPipeline& OcrPipeline::operator=(OcrPipeline&&) noexcept = default;
OcrPipeline::~OcrPipeline() = default;
const std::vector<Step>& OcrPipeline::steps() const { return impl_->steps; }
const Session& OcrPipeline::det_session() const { return *impl_->det; }

Result<std::vector<SizedRun>> OcrPipeline::largest_runs() const {
  const Impl& m = *impl_;
  // detect(): the longer side scaled to at most det_limit_side_len, then each side rounded to a multiple of 32.
  const int64_t side = std::max<int64_t>(32, std::lround(m.p("det_limit_side_len") / 32) * 32);
  const int64_t rec_width = m.rec_width(0);
  std::vector<SizedRun> runs;
  auto add = [&](const char* what, const Session& s, std::vector<int64_t> dims) -> Status {
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, dims));
    SizedRun run{what, &s, {}};
    run.feeds.push_back({s.inputs()[0].name, std::move(t)});
    runs.push_back(std::move(run));
    return {};
  };
  GB_RETURN_IF_ERROR(add("det", *m.det, {1, 3, side, side}));
  if (m.cls) GB_RETURN_IF_ERROR(add("cls", *m.cls, {m.batch_num("cls_batch_num"), 3, 48, 192}));
  GB_RETURN_IF_ERROR(add("rec", *m.rec, {m.batch_num("rec_batch_num"), 3, 48, rec_width}));
  return runs;
}

}  // namespace glassbox::vision::ocr
