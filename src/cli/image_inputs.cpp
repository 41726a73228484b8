#include "cli/image_inputs.h"

#include "glassbox/vision_pipeline.h"

namespace glassbox::cli {

std::string image_model_dir(const TextArgs& a) {
  if (!a.model_dir.empty()) return vision::is_image_model_dir(a.model_dir) ? a.model_dir : "";
  if (!a.positional.empty() && vision::is_image_model_dir(a.positional[0])) return a.positional[0];
  return "";
}

namespace {

// The image arguments after the model directory, each checked to be an image file.
std::vector<std::string> image_files(const std::string& verb, const std::string& dir, const TextArgs& a) {
  std::vector<std::string> images(a.positional.begin() + (a.model_dir.empty() ? 1 : 0), a.positional.end());
  if (images.empty())
    fail(verb.c_str(), make_error(ErrorCode::kInvalidArgument, "no image files given", dir,
                                  "an image model directory takes image files: glassbox " + verb + " DIR a.jpg b.png"));
  for (const auto& p : images)
    if (!vision::looks_like_image_file(p))
      fail(verb.c_str(), make_error(ErrorCode::kInvalidArgument,
                                    "'" + p + "' is not an image file (JPEG, PNG or WebP, recognised by magic bytes)", dir,
                                    "this is an image model directory (preprocessor_config.json, no tokenizer.json): "
                                    "every argument after it must be an image file"));
  return images;
}

}  // namespace

std::vector<std::vector<float>> run_image_embed(const std::string& dir, const TextArgs& a, bool print) {
  const std::vector<std::string> images = image_files("embed", dir, a);
  vision::ImageClassifierOptions opts;
  a.session.apply(opts.session);
  auto e = vision::ImageEmbedder::load(dir, opts);
  if (!e.ok()) fail("embed", e.error());
  auto r = e->embed_files(images);  // one batch: every image preprocessed to the declared size
  if (!r.ok()) fail("embed", r.error());
  std::vector<std::vector<float>> vectors;
  for (size_t i = 0; i < images.size(); ++i) {
    if (print) {
      nlohmann::ordered_json j{{"image", images[i]}, {"vector", (*r)[i].vector}, {"width", (*r)[i].width}, {"height", (*r)[i].height}};
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    vectors.push_back(std::move((*r)[i].vector));
  }
  return vectors;
}

void run_image_classify(const std::string& dir, const TextArgs& a, int top_k) {
  const std::vector<std::string> images = image_files("classify", dir, a);
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
