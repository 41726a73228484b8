#include "diag/explain_model.h"

#include <filesystem>

#include "glassbox/memory_budget.h"
#include "glassbox/ocr.h"
#include "glassbox/vision_pipeline.h"

namespace glassbox::diag {
namespace {

namespace fs = std::filesystem;

template <class Step>
void add_steps(const std::vector<Step>& steps, std::vector<Derivation>& out) {
  for (const auto& s : steps)
    out.push_back({s.field, s.value, s.risk.empty() ? s.source : s.source + " (risk: " + s.risk + ")"});
}

void add_session(const Session& session, EffectiveOptions& opts, ModelExplanation& m) {
  opts.session = session.options();
  m.op_choices = session.op_decisions();
  m.cache = session.weights_cache_report();
}

// docs/vision.md, "OCR": every stage's parameter with its source.
Status explain_ocr(const std::string& dir, EffectiveOptions& opts, ModelExplanation& m) {
  vision::ocr::OcrOptions oo;
  oo.session = opts.session;
  GB_ASSIGN_OR_RETURN(auto p, vision::ocr::OcrPipeline::load(dir, oo));
  add_steps(p.steps(), m.decisions);
  add_session(p.det_session(), opts, m);
  return {};
}

// docs/vision.md: every preprocessing step of an image classifier or embedder (the declared task rule).
Status explain_image(const std::string& dir, EffectiveOptions& opts, ModelExplanation& m) {
  vision::ImageClassifierOptions io;
  io.session = opts.session;
  GB_ASSIGN_OR_RETURN(auto task, vision::image_model_task(dir));
  if (task.first == vision::ImageTask::kFeatureExtraction) {
    GB_ASSIGN_OR_RETURN(auto e, vision::ImageEmbedder::load(dir, io));
    add_steps(e.steps(), m.decisions);
    add_session(e.session(), opts, m);
  } else {
    GB_ASSIGN_OR_RETURN(auto c, vision::ImageClassifier::load(dir, io));
    add_steps(c.steps(), m.decisions);
    add_session(c.session(), opts, m);
  }
  return {};
}

// A text pipeline; with a budget (the flag, glassbox.json max_memory) the breakdown of the largest declared shape.
Status explain_text(const std::string& dir, const PipelineOptions& po, int64_t max_memory, EffectiveOptions& opts,
                    ModelExplanation& m) {
  GB_ASSIGN_OR_RETURN(auto budgeted, pipeline::load_with_budget(dir, po, max_memory));
  m.decisions = budgeted.pipeline.derivations();
  if (budgeted.estimate) m.decisions.insert(m.decisions.end(), budgeted.rows.begin(), budgeted.rows.end());
  for (const auto& d : m.decisions)  // glassbox.json may declare these session options
    if ((d.field == "precision" || d.field == "weights_cache" || d.field == "pool_wait") && d.source == "glassbox.json")
      opts.sources["session." + d.field] = "file (glassbox.json)";
    else if (d.field == "unspecialized_symbols" && d.source.rfind("default", 0) == 0)
      opts.sources["session." + d.field] = "derived";
  add_session(budgeted.pipeline.session(), opts, m);
  return {};
}

}  // namespace

Result<ExplainedModel> explain_model(const std::string& path, const PipelineOptions& pipeline_options, int64_t max_memory,
                                     EffectiveOptions& opts) {
  ExplainedModel out;
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  // A folder without tokenizer.json is a tensor model as `serve` reads it.
  const bool tensor_dir = dir && !fs::exists(fs::path(path) / "tokenizer.json", ec);
  // Image and OCR directories have no warm-up file (warmup_dir stays empty).
  const std::string warmup_dir =
      dir ? path : fs::path(path).filename() == "model.onnx" ? fs::path(path).parent_path().string() : std::string();
  if (dir && vision::ocr::is_ocr_model_dir(path)) {
    GB_RETURN_IF_ERROR(explain_ocr(path, opts, out.model));
    return out;
  }
  if (dir && vision::is_image_model_dir(path)) {
    GB_RETURN_IF_ERROR(explain_image(path, opts, out.model));
    return out;
  }
  out.warmup_dir = warmup_dir;
  if (dir && !tensor_dir) {
    GB_RETURN_IF_ERROR(explain_text(path, pipeline_options, max_memory, opts, out.model));
    out.pipeline = true;
  } else {
    std::string model_file = path;
    if (tensor_dir) {  // where publishers put it (find_model_file)
      GB_ASSIGN_OR_RETURN(ModelFileChoice f, find_model_file(path, pipeline_options.model_file));
      model_file = f.path;
    }
    GB_ASSIGN_OR_RETURN(Session session, Session::load(model_file, opts.session));
    add_session(session, opts, out.model);
    out.tensor_session.emplace(std::move(session));
  }
  return out;
}

}  // namespace glassbox::diag
