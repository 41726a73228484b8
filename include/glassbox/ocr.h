// OCR over the PP-OCR family (docs/vision.md, "OCR"): detection (DB-net) -> box post-processing ->
// rotated crop -> optional 180-degree angle classifier -> recognition with CTC greedy decoding over the
// dictionary. The model directory's glassbox.json names the files ({"ocr": {"det", "rec", "cls", "dict"}});
// every parameter is a declared default (value, reason, source) unless glassbox.json's "ocr" sets it, and
// each is listed by steps() (what `glassbox explain` prints).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <array>

#include "glassbox/session.h"
#include "glassbox/vision.h"
#include "glassbox/vision_pipeline.h"

namespace glassbox::vision::ocr {

struct Point {
  double x = 0, y = 0;
};
// Four corners: top-left, top-right, bottom-right, bottom-left (image coordinates, y down).
using Quad = std::array<Point, 4>;

struct OcrOptions {
  SessionOptions session;
  DecodeLimits limits;
};

struct OcrLine {
  std::string text;
  float score = 0;       // mean of the recogniser's per-character maxima
  float box_score = 0;   // mean detection probability inside the box
  Quad box;              // image pixels, clockwise from top-left
  bool rotated_180 = false;
};

struct OcrResult {
  std::vector<OcrLine> lines;  // reading order
  int width = 0, height = 0;
  int det_width = 0, det_height = 0;  // the detector's input size
  int boxes_found = 0;                // before recognition's drop_score filter
};

class OcrPipeline {
 public:
  static Result<OcrPipeline> load(const std::string& model_dir, const OcrOptions& options = {});
  OcrPipeline(OcrPipeline&&) noexcept;
  OcrPipeline& operator=(OcrPipeline&&) noexcept;
  ~OcrPipeline();
  const std::vector<Step>& steps() const;
  const Session& det_session() const;
  // The runs of one request at the largest declared sizes: det at det_limit_side_len square (rounded to 32), cls
  // at 48 x 192, rec at 48 x rec_min_width (a line wider than that runs wider: checked per run, not here).
  Result<std::vector<SizedRun>> largest_runs() const;
  Result<OcrResult> run(const RgbImage& image) const;
  Result<OcrResult> run_file(const std::string& path) const;
  struct Impl;

 private:
  explicit OcrPipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True when `dir` holds a glassbox.json with an "ocr" object (the rule `explain` uses).
bool is_ocr_model_dir(const std::string& dir);

}  // namespace glassbox::vision::ocr
