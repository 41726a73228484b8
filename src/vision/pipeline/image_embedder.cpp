// Image feature extraction: decode -> declared preprocessing -> one engine run for the batch ->
// the declared output, pooled and normalized as declared (docs/vision.md, "Image embeddings").
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "glassbox/vision_pipeline.h"
#include "vision/pipeline/model_file.h"

namespace glassbox::vision {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json_or_null(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return nullptr;
  json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<std::pair<ImageTask, Step>> image_model_task(const std::string& dir) {
  const json g = read_json_or_null(fs::path(dir) / "glassbox.json");
  if (g.is_object() && g.contains("task")) {
    const std::string t = g["task"].is_string() ? g["task"].get<std::string>() : "";
    if (t == "image-classification" || t == "classify")
      return std::make_pair(ImageTask::kClassification, Step{"task", "image-classification", "glassbox.json task", ""});
    if (t == "image-feature-extraction" || t == "embed")
      return std::make_pair(ImageTask::kFeatureExtraction, Step{"task", "image-feature-extraction", "glassbox.json task", ""});
    return make_error(ErrorCode::kInvalidModel, "glassbox.json task '" + g["task"].dump() + "' is not an image task", dir,
                      "use \"image-classification\" or \"image-feature-extraction\"");
  }
  const json c = read_json_or_null(fs::path(dir) / "config.json");
  if (c.is_object() && c.contains("architectures") && c["architectures"].is_array())
    for (const auto& a : c["architectures"]) {
      if (!a.is_string()) continue;
      const std::string s = a.get<std::string>();
      const std::string src = "config.json architectures " + s;
      if (ends_with(s, "ForImageClassification"))
        return std::make_pair(ImageTask::kClassification, Step{"task", "image-classification", src, ""});
      if (ends_with(s, "VisionModel") || ends_with(s, "VisionModelWithProjection") || ends_with(s, "Model"))
        return std::make_pair(ImageTask::kFeatureExtraction, Step{"task", "image-feature-extraction", src, ""});
    }
  return std::make_pair(ImageTask::kClassification,
                        Step{"task", "image-classification", "default (no glassbox.json task, no config.json architectures)",
                             "an embedding model without architectures is served as a classifier over its output"});
}

struct ImageEmbedder::Impl {
  std::optional<Session> session;
  Preprocess pre;
  Layout layout = Layout::kNchw;
  std::string input, output;
  std::string pooling;  // "" (output already pooled), "cls" or "mean"
  bool normalize = false;
  bool batch = false;   // the input's batch dimension is symbolic
  int64_t dims = -1;
  DecodeLimits limits;
  std::vector<Step> steps;
};

namespace {

Status pick_input(ImageEmbedder::Impl& m) {
  const auto& ins = m.session->inputs();
  const TensorSpec* in = nullptr;
  for (const auto& s : ins)
    if (s.name == "pixel_values") in = &s;
  if (!in && ins.size() == 1) in = &ins[0];
  if (!in || in->dtype != DataType::kFloat32)
    return make_error(ErrorCode::kUnsupported, "no float32 image input (pixel_values, or the only input)", {},
                      "export the vision tower with one float32 input named pixel_values");
  m.input = in->name;
  m.steps.push_back({"input", in->to_string(), ins.size() == 1 ? "the model's only input" : "the input named pixel_values", ""});
  if (m.pre.layout) {
    m.layout = *m.pre.layout;
  } else {
    GB_ASSIGN_OR_RETURN(m.layout, layout_from_input_shape(in->dims));
    m.steps.push_back({"layout", layout_name(m.layout), "model input shape " + in->to_string(), ""});
  }
  m.batch = !in->has_shape || in->dims.empty() || in->dims[0] < 0;
  m.steps.push_back({"batch", m.batch ? "one engine run for all images (no padding: every image is preprocessed to the declared size)"
                                      : "one engine run per image",
                     "model input dim 0 " + std::string(m.batch ? "symbolic" : "fixed"), ""});
  return Status();
}

Status pick_output(const json& g, ImageEmbedder::Impl& m) {
  const auto& outs = m.session->outputs();
  auto find = [&](const std::string& n) -> const TensorSpec* {
    for (const auto& s : outs)
      if (s.name == n) return &s;
    return nullptr;
  };
  const TensorSpec* out = nullptr;
  std::string source;
  if (g.is_object() && g.contains("output") && g["output"].is_string()) {
    out = find(g["output"].get<std::string>());
    if (!out) return make_error(ErrorCode::kInvalidModel, "glassbox.json output '" + g["output"].get<std::string>() + "' is not a model output");
    source = "glassbox.json output";
  }
  for (const char* n : {"image_embeds", "pooler_output", "last_hidden_state"})
    if (!out && (out = find(n))) source = std::string("the output named ") + n + " (image_embeds > pooler_output > last_hidden_state)";
  if (!out && outs.size() == 1) out = &outs[0], source = "the model's only output";
  if (!out)
    return make_error(ErrorCode::kUnsupported, "no output named image_embeds, pooler_output or last_hidden_state among several", {},
                      "name the embedding output in glassbox.json \"output\"");
  m.output = out->name;
  m.steps.push_back({"output", out->to_string(), source, ""});
  const bool sequence = out->has_shape && out->dims.size() == 3;
  if (g.is_object() && g.contains("pooling")) {
    m.pooling = g["pooling"].is_string() ? g["pooling"].get<std::string>() : "?";
    if (m.pooling != "cls" && m.pooling != "mean")
      return make_error(ErrorCode::kInvalidModel, "glassbox.json pooling must be \"cls\" or \"mean\"", {});
    m.steps.push_back({"pooling", m.pooling, "glassbox.json pooling", ""});
  } else if (sequence) {
    return make_error(ErrorCode::kUnsupported, "output '" + out->name + "' is a token sequence " + out->to_string() +
                                                   " and no pooling is declared", {},
                      "declare glassbox.json \"pooling\": \"cls\" (the class token) or \"mean\" (over every token)");
  } else {
    m.steps.push_back({"pooling", "none (the output is one vector per image)", "output shape " + out->to_string(), ""});
  }
  if (out->has_shape && !out->dims.empty() && out->dims.back() > 0) m.dims = out->dims.back();
  return Status();
}

}  // namespace

Result<ImageEmbedder> ImageEmbedder::load(const std::string& dir, const ImageClassifierOptions& options) {
  auto m = std::make_unique<Impl>();
  m->limits = options.limits;
  GB_ASSIGN_OR_RETURN(m->pre, read_preprocess(dir));
  m->steps = m->pre.steps;
  GB_ASSIGN_OR_RETURN(auto task, image_model_task(dir));
  m->steps.push_back(task.second);
  GB_ASSIGN_OR_RETURN(Session session, load_model_session(dir, options.session, m->steps));
  m->session.emplace(std::move(session));
  GB_RETURN_IF_ERROR(pick_input(*m));
  const json g = read_json_or_null(fs::path(dir) / "glassbox.json");
  if (Status st = pick_output(g, *m); !st.ok()) return std::move(st).take_error().with_where(dir);
  if (g.is_object() && g.contains("normalize")) {
    if (!g["normalize"].is_boolean()) return make_error(ErrorCode::kInvalidModel, "glassbox.json normalize must be true or false", dir);
    m->normalize = g["normalize"].get<bool>();
    m->steps.push_back({"normalize", m->normalize ? "L2" : "none", "glassbox.json normalize", ""});
  } else {
    m->steps.push_back({"normalize", "none", "default: transformers' image-feature-extraction pipeline returns the vector as the model gives it",
                        "cosine similarity needs unit vectors: a caller comparing dot products must normalize (glassbox.json "
                        "\"normalize\": true)"});
  }
  return ImageEmbedder(std::move(m));
}

ImageEmbedder::ImageEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageEmbedder::ImageEmbedder(ImageEmbedder&&) noexcept = default;
ImageEmbedder& ImageEmbedder::operator=(ImageEmbedder&&) noexcept = default;
ImageEmbedder::~ImageEmbedder() = default;
const std::vector<Step>& ImageEmbedder::steps() const { return impl_->steps; }
const Session& ImageEmbedder::session() const { return *impl_->session; }
int64_t ImageEmbedder::dims() const { return impl_->dims; }

namespace {

// Row r of a [N, D] or pooled [N, T, D] output, L2-normalized when declared.
std::vector<float> embedding_row(const Tensor& t, int64_t r, const ImageEmbedder::Impl& m) {
  const float* p = t.data<float>();
  std::vector<float> v;
  if (t.rank() == 3) {
    const int64_t tokens = t.shape()[1], d = t.shape()[2];
    const float* base = p + r * tokens * d;
    if (m.pooling == "cls") {
      v.assign(base, base + d);
    } else {  // mean over every token (an image has no padding)
      std::vector<double> acc(static_cast<size_t>(d), 0.0);
      for (int64_t k = 0; k < tokens; ++k)
        for (int64_t j = 0; j < d; ++j) acc[static_cast<size_t>(j)] += base[k * d + j];
      for (double a : acc) v.push_back(static_cast<float>(a / static_cast<double>(tokens)));
    }
  } else {
    const int64_t d = t.numel() / t.shape()[0];
    v.assign(p + r * d, p + (r + 1) * d);
  }
  if (m.normalize) {
    double ss = 0;
    for (float x : v) ss += static_cast<double>(x) * x;
    const double n = std::max(std::sqrt(ss), 1e-12);  // torch.nn.functional.normalize's eps
    for (float& x : v) x = static_cast<float>(x / n);
  }
  return v;
}

Result<std::vector<ImageEmbedding>> run_batch(const ImageEmbedder::Impl& m, const std::vector<const RgbImage*>& images) {
  GB_ASSIGN_OR_RETURN(Tensor t, pixel_batch(images, m.pre, m.layout, m.limits, *m.session, m.input));
  const int64_t n = t.shape()[0];
  GB_ASSIGN_OR_RETURN(auto outs, m.session->run({{m.input, std::move(t)}}));
  const Tensor* out = nullptr;
  for (const auto& o : outs)
    if (o.name == m.output) out = &o.tensor;
  const bool rank_ok = out && (out->rank() == 2 || (out->rank() == 3 && !m.pooling.empty()));
  if (!rank_ok || out->dtype() != DataType::kFloat32 || out->shape()[0] != n)
    return make_error(ErrorCode::kInvalidModel, "output '" + m.output + "' is not float32 [" + std::to_string(n) +
                                                    ", D] (or [N, tokens, D] with a declared pooling)");
  std::vector<ImageEmbedding> res;
  for (size_t i = 0; i < images.size(); ++i)
    res.push_back({embedding_row(*out, static_cast<int64_t>(i), m), images[i]->width, images[i]->height});
  return res;
}

}  // namespace

Result<SizedRun> ImageEmbedder::largest_run(int64_t batch) const {
  const Impl& m = *impl_;
  GB_ASSIGN_OR_RETURN(auto dims, fixed_preprocessed_dims(m.pre, m.layout, m.limits));
  dims[0] = m.batch ? std::max<int64_t>(1, batch) : 1;
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, dims));
  SizedRun run{"model", &*m.session, {}};
  run.feeds.push_back({m.input, std::move(t)});
  return run;
}

Result<std::vector<ImageEmbedding>> ImageEmbedder::embed(const std::vector<const RgbImage*>& images) const {
  if (images.empty()) return std::vector<ImageEmbedding>{};
  if (impl_->batch) return run_batch(*impl_, images);
  std::vector<ImageEmbedding> all;
  for (const RgbImage* im : images) {
    GB_ASSIGN_OR_RETURN(auto one, run_batch(*impl_, {im}));
    all.push_back(std::move(one.front()));
  }
  return all;
}

Result<std::vector<ImageEmbedding>> ImageEmbedder::embed_files(const std::vector<std::string>& paths) const {
  std::vector<DecodedImage> decoded;
  for (const auto& p : paths) {
    auto d = decode_image_file(p, impl_->limits);
    if (!d.ok()) return std::move(d).take_error().with_where(p);
    decoded.push_back(std::move(d).value());
  }
  std::vector<const RgbImage*> ptrs;
  for (const auto& d : decoded) ptrs.push_back(&d.image);
  return embed(ptrs);
}

}  // namespace glassbox::vision
