#include "cli/image_inputs.h"

#include "glassbox/vision_pipeline.h"

namespace glassbox::cli {

std::string image_model_dir(const TextArgs& a) {
  if (!a.model_dir.empty()) return vision::is_image_model_dir(a.model_dir) ? a.model_dir : "";
  if (!a.positional.empty() && vision::is_image_model_dir(a.positional[0])) return a.positional[0];
  return "";
}

void run_image_classify(const std::string& dir, const TextArgs& a, int top_k) {
  std::vector<std::string> images(a.positional.begin() + (a.model_dir.empty() ? 1 : 0), a.positional.end());
  if (images.empty())
    fail("classify", make_error(ErrorCode::kInvalidArgument, "no image files given", dir,
                                "an image model directory classifies image files: glassbox classify DIR a.jpg b.png"));
  for (const auto& p : images)
    if (!vision::looks_like_image_file(p))
      fail("classify", make_error(ErrorCode::kInvalidArgument,
                                  "'" + p + "' is not an image file (JPEG, PNG or WebP, recognised by magic bytes)", dir,
                                  "this is an image model directory (preprocessor_config.json, no tokenizer.json): "
                                  "every argument after it must be an image file"));
  vision::ImageClassifierOptions opts;
  a.session.apply(opts.session);  // every session flag given, not only --threads
  auto c = vision::ImageClassifier::load(dir, opts);
  if (!c.ok()) fail("classify", c.error());
  for (const auto& p : images) {
    auto r = c->classify_file(p, top_k);
    if (!r.ok()) fail("classify", r.error());
    nlohmann::ordered_json j;
    j["image"] = p;
    j["label"] = r->labels.empty() ? "" : r->labels.front().label;
    auto labels = nlohmann::ordered_json::array();
    for (const auto& l : r->labels) labels.push_back({{"label", l.label}, {"score", l.score}});
    j["labels"] = labels;
    j["logits"] = r->logits;
    j["width"] = r->width;
    j["height"] = r->height;
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
}

}  // namespace glassbox::cli
