// Image classification: decode -> declared preprocessing -> one engine run -> scores over id2label.
#include <algorithm>
#include <cmath>
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

Result<json> read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return json(nullptr);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(ErrorCode::kInvalidModel, "not a JSON object", p.string());
  return j;
}

}  // namespace

struct ImageClassifier::Impl {
  std::optional<Session> session;  // set by load
  Preprocess pre;
  Layout layout = Layout::kNchw;
  std::string input, output;
  std::vector<std::string> labels;
  bool sigmoid = false;
  DecodeLimits limits;
  std::vector<Step> steps;
};

bool is_image_model_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  if (!fs::is_directory(d, ec) || fs::exists(d / "tokenizer.json", ec)) return false;
  if (fs::exists(d / "preprocessor_config.json", ec)) return true;
  auto g = read_json(d / "glassbox.json");
  return g.ok() && g->is_object() && g->contains("vision");
}

namespace {

Status read_labels(const fs::path& dir, int64_t n, ImageClassifier::Impl& m) {
  GB_ASSIGN_OR_RETURN(json cfg, read_json(dir / "config.json"));
  const std::string src = "config.json id2label";
  if (cfg.is_object() && cfg.contains("id2label") && cfg["id2label"].is_object()) {
    m.labels.assign(static_cast<size_t>(n), "");
    for (const auto& [k, v] : cfg["id2label"].items()) {
      char* end = nullptr;
      const long i = std::strtol(k.c_str(), &end, 10);
      if (*end || i < 0 || i >= n || !v.is_string())
        return make_error(ErrorCode::kInvalidModel, "id2label key '" + k + "' is not a label index below " + std::to_string(n),
                          (dir / "config.json").string());
      m.labels[static_cast<size_t>(i)] = v.get<std::string>();
    }
    for (int64_t i = 0; i < n; ++i)
      if (m.labels[static_cast<size_t>(i)].empty())
        return make_error(ErrorCode::kInvalidModel, "id2label has no label " + std::to_string(i) + " of " + std::to_string(n),
                          (dir / "config.json").string());
    m.steps.push_back({"labels", std::to_string(n) + " labels", src, ""});
  } else {
    for (int64_t i = 0; i < n; ++i) m.labels.push_back("LABEL_" + std::to_string(i));
    m.steps.push_back({"labels", "LABEL_0..LABEL_" + std::to_string(n - 1), "default (no config.json id2label)",
                       "transformers' own default names: the labels' meaning is unknown"});
  }
  const bool multi = cfg.is_object() && cfg.value("problem_type", "") == "multi_label_classification";
  m.sigmoid = multi;
  m.steps.push_back({"scores", multi ? "sigmoid" : "softmax",
                     multi ? "config.json problem_type multi_label_classification"
                           : "default: softmax over the logits (transformers' image-classification pipeline for one "
                             "label per image)",
                     multi ? "" : "a multi-label model that does not say so in problem_type gets softmax scores"});
  return Status();
}

Status pick_io(ImageClassifier::Impl& m) {
  const auto& ins = m.session->inputs();
  const TensorSpec* in = nullptr;
  for (const auto& s : ins)
    if (s.name == "pixel_values") in = &s;
  if (!in && ins.size() == 1) in = &ins[0];
  if (!in)
    return make_error(ErrorCode::kUnsupported, "the model has " + std::to_string(ins.size()) +
                                                   " inputs and none is named pixel_values: which takes the image is a guess",
                      {}, "export the model with one image input named pixel_values");
  if (in->dtype != DataType::kFloat32)
    return make_error(ErrorCode::kUnsupported, "image input '" + in->name + "' is not float32", {}, "export a float32 input");
  m.input = in->name;
  m.steps.push_back({"input", in->to_string(), ins.size() == 1 ? "the model's only input" : "the input named pixel_values", ""});
  if (m.pre.layout) {
    m.layout = *m.pre.layout;
  } else {
    GB_ASSIGN_OR_RETURN(m.layout, layout_from_input_shape(in->dims));
    m.steps.push_back({"layout", layout_name(m.layout), "model input shape " + in->to_string(), ""});
  }
  const auto& outs = m.session->outputs();
  const TensorSpec* out = nullptr;
  for (const auto& s : outs)
    if (s.name == "logits") out = &s;
  if (!out && outs.size() == 1) out = &outs[0];
  if (!out) return make_error(ErrorCode::kUnsupported, "no output named logits among several outputs", {}, "name it logits");
  m.output = out->name;
  m.steps.push_back({"output", out->to_string(), outs.size() == 1 ? "the model's only output" : "the output named logits", ""});
  return Status();
}

}  // namespace

Result<ImageClassifier> ImageClassifier::load(const std::string& dir, const ImageClassifierOptions& options) {
  auto m = std::make_unique<Impl>();
  m->limits = options.limits;
  GB_ASSIGN_OR_RETURN(m->pre, read_preprocess(dir));
  m->steps = m->pre.steps;
  GB_ASSIGN_OR_RETURN(Session session, load_model_session(dir, options.session, m->steps));
  m->session.emplace(std::move(session));
  GB_RETURN_IF_ERROR(pick_io(*m));
  int64_t n = 0;
  for (const auto& s : m->session->outputs())
    if (s.name == m->output && !s.dims.empty()) n = s.dims.back();
  if (n <= 0) {  // symbolic label count: id2label decides it
    GB_ASSIGN_OR_RETURN(json cfg, read_json(fs::path(dir) / "config.json"));
    n = cfg.is_object() && cfg.contains("id2label") ? static_cast<int64_t>(cfg["id2label"].size()) : 0;
  }
  if (n <= 0) return make_error(ErrorCode::kInvalidModel, "the number of labels is unknown", dir, "add config.json id2label");
  GB_RETURN_IF_ERROR(read_labels(dir, n, *m));
  return ImageClassifier(std::move(m));
}

ImageClassifier::ImageClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageClassifier::ImageClassifier(ImageClassifier&&) noexcept = default;
ImageClassifier& ImageClassifier::operator=(ImageClassifier&&) noexcept = default;
ImageClassifier::~ImageClassifier() = default;
const std::vector<Step>& ImageClassifier::steps() const { return impl_->steps; }
const Session& ImageClassifier::session() const { return *impl_->session; }
const std::vector<std::string>& ImageClassifier::labels() const { return impl_->labels; }

Result<SizedRun> ImageClassifier::largest_run() const {
  const Impl& m = *impl_;
  GB_ASSIGN_OR_RETURN(auto dims, fixed_preprocessed_dims(m.pre, m.layout, m.limits));
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, dims));
  SizedRun run{"model", &*m.session, {}};
  run.feeds.push_back({m.input, std::move(t)});
  return run;
}

Result<ImageClassification> ImageClassifier::classify(const RgbImage& image, int top_k) const {
  const Impl& m = *impl_;
  GB_ASSIGN_OR_RETURN(Tensor t, pixel_batch({&image}, m.pre, m.layout, m.limits, *m.session, m.input));
  GB_ASSIGN_OR_RETURN(auto outs, m.session->run({{m.input, std::move(t)}}));
  const Tensor* logits = nullptr;
  for (const auto& o : outs)
    if (o.name == m.output) logits = &o.tensor;
  if (!logits || logits->dtype() != DataType::kFloat32 || logits->numel() != static_cast<int64_t>(m.labels.size()))
    return make_error(ErrorCode::kInvalidModel, "output '" + m.output + "' is not " + std::to_string(m.labels.size()) +
                                                    " float logits for one image");
  ImageClassification c;
  c.width = image.width, c.height = image.height;
  c.logits.assign(logits->data<float>(), logits->data<float>() + logits->numel());
  std::vector<float> score(c.logits.size());
  if (m.sigmoid) {
    for (size_t i = 0; i < score.size(); ++i) score[i] = 1.0f / (1.0f + std::exp(-c.logits[i]));
  } else {
    const float mx = *std::max_element(c.logits.begin(), c.logits.end());
    double sum = 0;
    for (size_t i = 0; i < score.size(); ++i) sum += score[i] = std::exp(c.logits[i] - mx);
    for (auto& s : score) s = static_cast<float>(s / sum);
  }
  std::vector<size_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top_k; ++i)
    c.labels.push_back({m.labels[order[i]], score[order[i]]});
  return c;
}

Result<ImageClassification> ImageClassifier::classify_file(const std::string& path, int top_k) const {
  GB_ASSIGN_OR_RETURN(DecodedImage d, decode_image_file(path, impl_->limits));
  auto r = classify(d.image, top_k);
  if (!r.ok()) return std::move(r).take_error().with_where(path);
  return r;
}

}  // namespace glassbox::vision
